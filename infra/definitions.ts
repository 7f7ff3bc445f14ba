import {
  AUTHORIZER_FUNCTION,
  FUNCTIONS,
  type FunctionDefinition,
  ROUTES,
  type RouteDefinition,
} from '#lib/definitions/routes';

/** A route whose function is named by a plain string, so tests can pass route tables of their own. */
export type RouteSpec = Omit<RouteDefinition, 'function'> & { function: string };

/** What the stack is built from: the functions, the routes and the name of the authorizer function. */
export interface ServiceDefinitions {
  functions: Readonly<Record<string, FunctionDefinition>>;
  routes: readonly RouteSpec[];
  authorizer: string;
}

/** The shared definitions of lib/definitions/routes.ts, which the local runtime serves too. */
export const SERVICE_DEFINITIONS: ServiceDefinitions = {
  functions: FUNCTIONS,
  routes: ROUTES,
  authorizer: AUTHORIZER_FUNCTION,
};
