import type { TableKey } from './tables';

/**
 * The functions and routes of the API, defined once. The CDK stack builds its Lambda functions, IAM
 * grants and API Gateway methods from these; the local gateway serves the same routes with the same
 * handler exports.
 */
export type DynamoAction = 'GetItem' | 'PutItem' | 'Query';

export interface FunctionDefinition {
  /** Source file, relative to the project root; its `handler` export is the Lambda handler. */
  entry: string;
  description: string;
  /** Exactly the DynamoDB actions the function may perform, per table (least privilege). */
  access: Partial<Record<TableKey, readonly DynamoAction[]>>;
}

export const FUNCTIONS = {
  createSession: {
    entry: 'functions/create-session.ts',
    description: 'POST /api/embed/sessions: creates an embed session',
    access: { boards: ['GetItem'], memberships: ['GetItem'], sessions: ['PutItem'] },
  },
  authorizer: {
    entry: 'functions/authorizer.ts',
    description: 'TOKEN authorizer: resolves API keys',
    access: { apiKeys: ['GetItem'] },
  },
  embedPage: {
    entry: 'functions/embed-page.ts',
    description: 'GET /embed: the embedded board page',
    access: { sessions: ['Query'], boards: ['GetItem'] },
  },
  health: {
    entry: 'functions/health.ts',
    description: 'GET /health',
    access: {},
  },
} as const satisfies Record<string, FunctionDefinition>;

export type FunctionName = keyof typeof FUNCTIONS;

export interface RouteDefinition {
  method: 'GET' | 'POST';
  path: string;
  function: FunctionName;
  /** `apiKey`: the TOKEN authorizer runs first and its context reaches the function. */
  auth: 'apiKey' | 'none';
}

export const ROUTES: readonly RouteDefinition[] = [
  { method: 'POST', path: '/api/embed/sessions', function: 'createSession', auth: 'apiKey' },
  { method: 'GET', path: '/embed', function: 'embedPage', auth: 'none' },
  { method: 'GET', path: '/health', function: 'health', auth: 'none' },
];

/** The function that authorizes `auth: 'apiKey'` routes. */
export const AUTHORIZER_FUNCTION: FunctionName = 'authorizer';
