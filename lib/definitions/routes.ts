import type { TableKey } from './tables';

/**
 * The functions and routes of the API, defined once. The CDK stack builds its Lambda functions, IAM
 * grants and API Gateway methods from these; the local gateway serves the same routes with the same
 * handler exports.
 */
export type DynamoAction = 'GetItem' | 'PutItem' | 'Query';

/** Optional settings a function reads from its environment, besides LOG_LEVEL and its table names. */
export type FunctionSetting = 'PUBLIC_BASE_URL' | 'METADATA_MAX_BYTES' | 'EMBED_FRAME_ANCESTORS';

/** House defaults of every function, in AWS and in the local gateway's Lambda context. */
export const FUNCTION_MEMORY_MB = 512;
/**
 * Far above what an invocation may spend on DynamoDB (its 5 s request budget, lib/http/middlewares/
 * request-budget.ts, which also stops 1 s before Lambda's own timeout), so a slow DynamoDB ends in the
 * service's own 503, never in a Lambda timeout. API Gateway itself waits 29 s.
 */
export const FUNCTION_TIMEOUT_SECONDS = 20;

export interface FunctionDefinition {
  /** Source file, relative to the project root; its `handler` export is the Lambda handler. */
  entry: string;
  description: string;
  /** Exactly the DynamoDB actions the function may perform, per table (least privilege). */
  access: Partial<Record<TableKey, readonly DynamoAction[]>>;
  /** The optional settings it reads; the stack passes it these and no others. */
  settings: readonly FunctionSetting[];
}

export const FUNCTIONS = {
  createSession: {
    entry: 'functions/create-session.ts',
    description: 'POST /api/embed/sessions: creates an embed session',
    // GetItem on sessions: only to tell a retried put that met its own write from a real conflict.
    access: { boards: ['GetItem'], memberships: ['GetItem'], sessions: ['PutItem', 'GetItem'] },
    settings: ['PUBLIC_BASE_URL', 'METADATA_MAX_BYTES'],
  },
  authorizer: {
    entry: 'functions/authorizer.ts',
    description: 'TOKEN authorizer: resolves API keys',
    access: { apiKeys: ['GetItem'] },
    settings: [],
  },
  embedPage: {
    entry: 'functions/embed-page.ts',
    description: 'GET /embed: the embedded board page',
    access: { sessions: ['Query'], boards: ['GetItem'] },
    settings: ['EMBED_FRAME_ANCESTORS'],
  },
  health: {
    entry: 'functions/health.ts',
    description: 'GET /health',
    access: {},
    settings: [],
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
