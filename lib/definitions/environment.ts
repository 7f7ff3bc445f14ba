/**
 * What each function's environment holds, decided by its definition alone: the stack sets exactly these
 * variables (infra/constructs/service-function.ts), and the function's code sees exactly these
 * (`environmentOf`), so what a function reads and what its stack gives it cannot drift apart.
 */
import type { BackgroundFunctionDefinition } from './background';
import { BACKGROUND_FUNCTIONS, type BackgroundFunctionName } from './background';
import { FUNCTIONS, type FunctionDefinition, type FunctionName, type FunctionSetting } from './routes';
import { TABLES, type TableKey } from './tables';

export type Env = Record<string, string | undefined>;

/** Every function the stack deploys, by name: the API's and the background ones. */
export const ALL_FUNCTIONS: Readonly<
  Record<FunctionName | BackgroundFunctionName, FunctionDefinition | BackgroundFunctionDefinition>
> = { ...FUNCTIONS, ...BACKGROUND_FUNCTIONS };

export type AnyFunctionName = FunctionName | BackgroundFunctionName;

/**
 * Set by Lambda itself in every function (the region, the function's name, its concurrency), or, off AWS,
 * pointing at a DynamoDB other than the regional one (`DYNAMODB_ENDPOINT`, the local runtime's). The stack
 * sets none of them.
 */
export const PLATFORM_VARIABLES = [
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_MAX_CONCURRENCY',
  'DYNAMODB_ENDPOINT',
] as const;

/**
 * The local runtime's form of a setting that is a KMS key on AWS: a key file the runtime made. A function
 * sees the file's variable exactly when its definition lists the setting.
 */
export const LOCAL_FORMS: Readonly<Partial<Record<FunctionSetting, string>>> = {
  ID_TOKEN_KEYRING_KEY: 'ID_TOKEN_KEY_FILE',
  WEBHOOK_SECRET_KEY: 'WEBHOOK_MASTER_KEY_FILE',
};

/**
 * Variables only the local runtime sets, never the stack, and the functions that read them: the operator's
 * WEBHOOK_ALLOW_LOOPBACK lets endpoints on this machine be registered (create-webhook checks it; deliveries
 * are the runtime's own). `variablesOf` leaves them out, so no deployed function is ever given one.
 */
export const LOCAL_ONLY_VARIABLES: Readonly<Partial<Record<AnyFunctionName, readonly string[]>>> = {
  createWebhook: ['WEBHOOK_ALLOW_LOOPBACK'],
};

/** The tables a function accesses, as its definition lists them. */
export function tableKeysOf(definition: FunctionDefinition): TableKey[] {
  return Object.keys(definition.access) as TableKey[];
}

/**
 * The variables the stack sets on a function: its log level (unless it writes no log line), the name of
 * each table it accesses, and the optional settings it reads (each only when the stage configures it).
 */
export function variablesOf(definition: FunctionDefinition): string[] {
  return [
    ...(definition.logs === false ? [] : ['LOG_LEVEL']),
    ...tableKeysOf(definition).map((key) => TABLES[key].envVar),
    ...definition.settings,
  ];
}

/**
 * The environment a function's code reads: of `env`, only the variables its definition gives it, their
 * local forms, its local-only variables and what Lambda sets; any other name reads as unset. In Lambda this changes nothing; in the
 * local runtime and the tests, where one process holds every function's variables, a function that reads
 * what its stack would not give it fails as it would on AWS.
 */
export function environmentOf(name: AnyFunctionName, env: Env): Env {
  const definition = ALL_FUNCTIONS[name];
  const visible = new Set<string>([
    ...variablesOf(definition),
    ...definition.settings.flatMap((setting) => LOCAL_FORMS[setting] ?? []),
    ...(LOCAL_ONLY_VARIABLES[name] ?? []),
    ...PLATFORM_VARIABLES,
  ]);
  return new Proxy(env, {
    get: (target, key) => (typeof key === 'string' && visible.has(key) ? target[key] : undefined),
    has: (target, key) => typeof key === 'string' && visible.has(key) && key in target,
    ownKeys: (target) => Reflect.ownKeys(target).filter((key) => typeof key === 'string' && visible.has(key)),
  });
}
