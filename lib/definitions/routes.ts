import {
  API_KEY_ID_INDEX,
  EVENT_OWNER_INDEX,
  EVENT_SESSION_INDEX,
  EVENT_TYPE_INDEX,
  MEMBERSHIP_USER_INDEX,
  SESSION_SCOPE_INDEXES,
  SESSION_TOKEN_INDEX,
  type TableKey,
} from './tables';

const SCOPE_INDEXES = Object.values(SESSION_SCOPE_INDEXES);

/** In `queries`: the function queries the table itself (by its partition key), not only indexes. */
export const TABLE_ITSELF = '';

/**
 * The functions and routes of the API, defined once. The CDK stack builds its Lambda functions, IAM
 * grants and API Gateway methods from these; the local gateway serves the same routes with the same
 * handler exports.
 */
/**
 * A DynamoDB action a function may be granted. No request path of an API key scans: only the delivery
 * worker, for the logouts of an operator's cut-off of a whole stage or of a user across tenants, which no
 * index holds, and the provisioning API's listings for the operator's own backend.
 */
export type DynamoAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'Query'
  | 'Scan';

/** Optional settings a function reads from its environment, besides LOG_LEVEL and its table names. */
export type FunctionSetting =
  | 'PUBLIC_BASE_URL'
  | 'METADATA_MAX_BYTES'
  | 'EMBED_FRAME_ANCESTORS'
  | 'BOARD_APP_URL'
  | 'ID_TOKEN_KEYRING_KEY'
  | 'WEBHOOK_SECRET_KEY'
  | 'EVENT_BUS_NAME'
  | 'WEBHOOK_DELIVERY_QUEUE_URL'
  | 'AUTHORIZER_CACHE_TTL_SECONDS'
  | 'MAX_SESSION_LIFETIME_SECONDS'
  | 'USAGE_PLAN_NAME';

/**
 * What a function may do with the keyring's KMS key (ID_TOKEN_KEYRING_KEY): `Decrypt` the keyring's
 * sealing key (the functions that sign, once per execution environment), `Encrypt` it when the keyring is
 * made (the rotation). The stack grants exactly these, with the keyring's encryption context.
 */
export type KmsAction = 'Decrypt' | 'Encrypt';

/**
 * What the keyring's ciphertext is bound to: KMS refuses to decrypt it under any other context, the grants
 * require it, and CloudTrail records it with every Decrypt, so a keyring decryption is told from any other.
 */
export const KEYRING_ENCRYPTION_CONTEXT = { purpose: 'id-token-keyring' } as const;

/** House defaults of every function, in AWS and in the local gateway's Lambda context. */
export const FUNCTION_MEMORY_MB = 512;
/**
 * Far above what an invocation may spend on DynamoDB (its 5 s request budget, lib/adapters/http/middlewares/
 * request-budget.ts, which also stops 1 s before Lambda's own timeout), so a slow DynamoDB ends in the
 * service's own 503, never in a Lambda timeout. API Gateway itself waits 29 s.
 */
export const FUNCTION_TIMEOUT_SECONDS = 20;
/** API Gateway's integration timeout: no function may run longer. */
export const API_GATEWAY_TIMEOUT_SECONDS = 29;

export interface FunctionDefinition {
  /** Source file, relative to the project root; its `handler` export is the Lambda handler. */
  entry: string;
  description: string;
  /** Exactly the DynamoDB actions the function may perform, per table (least privilege). */
  access: Partial<Record<TableKey, readonly DynamoAction[]>>;
  /** The indexes it queries, for every table whose actions include Query: Query is granted on these only. */
  queries?: Partial<Record<TableKey, readonly string[]>>;
  /** The optional settings it reads; the stack passes it these and no others. */
  settings: readonly FunctionSetting[];
  /** Its actions on the ID token keys in KMS, if any. */
  kms?: readonly KmsAction[];
  /** It derives webhook signing secrets: `GenerateMac` on the webhook secret key, and nothing else. */
  webhookSecrets?: boolean;
  /**
   * Its part in API Gateway's usage plans. `manage`: it keeps them in step with the keys it issues and
   * revokes (the admin CLI's work): it may create, find and delete API Gateway API keys and add them to
   * the stage's usage plans. `register`: it only puts a key that is in no plan into the default one
   * (find and create, never delete).
   */
  usagePlans?: 'manage' | 'register';
  /**
   * Package files it reads at run time (`package/path`), shipped next to its bundle by the same step
   * everywhere it is bundled (infra/bundling.ts); locally they are read from node_modules.
   */
  files?: readonly string[];
  /** `false`: it writes no log line of its own (Lambda's runtime reports a crash), so it is given no LOG_LEVEL. */
  logs?: false;
  /** Memory and timeout when the house defaults do not fit its work (see `runtimeOf`). */
  memoryMb?: number;
  timeoutSeconds?: number;
}

export const FUNCTIONS = {
  createSession: {
    entry: 'functions/create-session.ts',
    description: 'POST /api/embed/sessions: creates an embed session',
    access: {
      boards: ['GetItem'],
      memberships: ['GetItem'],
      // GetItem on sessions: only to tell a put that met its own earlier write from a real conflict.
      sessions: ['PutItem', 'GetItem'],
      // Claim (conditional put), read the holder, take over an ended lease, store the answer, end a
      // lease after a 5xx (updates): a record is never deleted, so a retry keeps its reservation.
      idempotency: ['PutItem', 'GetItem', 'UpdateItem'],
    },
    settings: ['PUBLIC_BASE_URL', 'METADATA_MAX_BYTES', 'MAX_SESSION_LIFETIME_SECONDS'],
  },
  listSessions: {
    entry: 'functions/list-sessions.ts',
    description: 'GET /api/embed/sessions: lists the sessions of a user or a board',
    access: {
      sessions: ['Query', 'BatchGetItem'],
      boards: ['GetItem'],
      memberships: ['GetItem', 'Query', 'BatchGetItem'],
    },
    queries: { sessions: SCOPE_INDEXES, memberships: [MEMBERSHIP_USER_INDEX] },
    settings: [],
  },
  getSession: {
    entry: 'functions/get-session.ts',
    description: 'GET /api/embed/sessions/{id}: retrieves a session',
    // BatchGetItem: the cut-off records that could cover the session (lib/domain/cutoffs.ts).
    access: { sessions: ['GetItem', 'BatchGetItem'], memberships: ['GetItem'] },
    settings: [],
  },
  revokeSession: {
    entry: 'functions/revoke-session.ts',
    description: 'POST /api/embed/sessions/{id}/revoke: revokes a session',
    access: { sessions: ['GetItem', 'BatchGetItem', 'UpdateItem'], memberships: ['GetItem'] },
    settings: [],
  },
  revokeUserSessions: {
    entry: 'functions/revoke-user-sessions.ts',
    description: "POST /api/embed/sessions/revoke: revokes a user's or a board's sessions with one cut-off",
    access: {
      // Query and BatchGetItem count the sessions; BatchGetItem reads each cut-off record before its
      // UpdateItem, which is conditional on the revision read (one record per scope, kept small).
      sessions: ['Query', 'BatchGetItem', 'UpdateItem'],
      boards: ['GetItem'],
      // The caller's organizations (the index, then BatchGetItem); GetItem: a creator's membership and
      // since when (whose tenant a counted session is). No organization's member list is read.
      memberships: ['GetItem', 'Query', 'BatchGetItem'],
    },
    queries: {
      sessions: [
        SESSION_SCOPE_INDEXES.orgUser,
        SESSION_SCOPE_INDEXES.creatorUser,
        SESSION_SCOPE_INDEXES.board,
      ],
      memberships: [MEMBERSHIP_USER_INDEX],
    },
    settings: [],
  },
  listEvents: {
    entry: 'functions/list-events.ts',
    description: 'GET /api/embed/events: lists the events of the sessions the caller created',
    // BatchGetItem: the events a type's index (keys only) names, read by their key.
    access: { events: ['Query', 'BatchGetItem'] },
    queries: { events: [EVENT_OWNER_INDEX, EVENT_SESSION_INDEX, EVENT_TYPE_INDEX] },
    settings: [],
  },
  createWebhook: {
    entry: 'functions/create-webhook.ts',
    description: 'POST /api/embed/webhooks: creates a webhook endpoint and shows its secret once',
    access: {
      // UpdateItem claims a place in the owner's registry (at most 16 endpoints); GetItem reads the
      // registry, a stale claim's endpoint, or a put that met its own earlier attempt; PutItem writes the
      // endpoint (and an owner's first registry); Query lists the owner's endpoints for that registry.
      webhooks: ['PutItem', 'GetItem', 'UpdateItem', 'Query'],
      idempotency: ['PutItem', 'GetItem', 'UpdateItem'],
    },
    queries: { webhooks: [TABLE_ITSELF] },
    // Endpoint URLs must point to the public internet; only the local runtime may allow loopback ones,
    // through a variable the stack never sets (LOCAL_ONLY_VARIABLES in lib/definitions/environment.ts).
    settings: ['WEBHOOK_SECRET_KEY'],
    webhookSecrets: true,
  },
  rotateWebhookSecret: {
    entry: 'functions/rotate-webhook-secret.ts',
    description:
      "POST /api/embed/webhooks/{id}/rotate-secret: a webhook endpoint's new signing secret, shown once",
    access: {
      // GetItem reads the endpoint's secret version (and a refused rotation back); UpdateItem moves it on.
      webhooks: ['GetItem', 'UpdateItem'],
      idempotency: ['PutItem', 'GetItem', 'UpdateItem'],
    },
    settings: ['WEBHOOK_SECRET_KEY'],
    webhookSecrets: true,
  },
  listWebhooks: {
    entry: 'functions/list-webhooks.ts',
    description: "GET /api/embed/webhooks: lists the caller's webhook endpoints, without secrets",
    access: { webhooks: ['Query'] },
    queries: { webhooks: [TABLE_ITSELF] },
    settings: [],
  },
  deleteWebhook: {
    entry: 'functions/delete-webhook.ts',
    description: 'DELETE /api/embed/webhooks/{id}: deletes a webhook endpoint',
    // PutItem replaces the endpoint with its tombstone; GetItem reads a refused delete back; UpdateItem
    // gives its place in the owner's registry back.
    access: { webhooks: ['PutItem', 'GetItem', 'UpdateItem'] },
    settings: [],
  },
  authorizer: {
    entry: 'functions/authorizer.ts',
    description: 'TOKEN authorizer: resolves API keys',
    // UpdateItem: a key's last use, at most once per cache period (AUTHORIZER_CACHE_TTL_SECONDS), and
    // once in its life that it was put in the usage plans.
    access: { apiKeys: ['GetItem', 'UpdateItem'] },
    // USAGE_PLAN_NAME: a key issued before the stage had usage plans is registered at its first use.
    settings: ['AUTHORIZER_CACHE_TTL_SECONDS', 'USAGE_PLAN_NAME'],
    usagePlans: 'register',
  },
  provisioning: {
    entry: 'functions/provisioning.ts',
    description:
      "GET /admin, PUT /admin, POST /admin and DELETE /admin (AWS IAM): an organization's boards, members and API keys",
    // One function for every provisioning route: the operator's own backend calls them rarely, so a cold
    // start per route buys nothing, and together they do what the admin CLI does with its table rights.
    access: {
      // Scan: an organization's boards (no index by organization; operators only).
      boards: ['GetItem', 'PutItem', 'DeleteItem', 'Scan'],
      // Query of the table itself: an organization's members.
      memberships: ['GetItem', 'PutItem', 'DeleteItem', 'Query'],
      // Scan: listing keys; Query: a key by id (the keyId index); GetItem: a refused create read back.
      apiKeys: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'Scan'],
      // The cut-offs that end a deleted board's, a revoked key's or a removed member's sessions: each
      // record read consistently (BatchGetItem), then merged with an UpdateItem conditional on it.
      sessions: ['BatchGetItem', 'UpdateItem'],
    },
    queries: { memberships: [TABLE_ITSELF], apiKeys: [API_KEY_ID_INDEX] },
    settings: ['USAGE_PLAN_NAME'],
    usagePlans: 'manage',
  },
  embedPage: {
    entry: 'functions/embed-page.ts',
    description:
      'GET /embed, HEAD /embed and GET /embed/ended: the embedded board page, the view after an end',
    // UpdateItem only to bind a bindToBrowser session on its first load (its two binding attributes), or
    // undo that; BatchGetItem reads the session with the cut-off records that could cover it.
    // signingKeys: the keyring, read once a minute at most by an environment that hands off.
    access: {
      sessions: ['Query', 'GetItem', 'BatchGetItem', 'UpdateItem'],
      boards: ['GetItem'],
      signingKeys: ['GetItem'],
    },
    queries: { sessions: [SESSION_TOKEN_INDEX] },
    // PUBLIC_BASE_URL: the issuer of the ID tokens it hands to board applications.
    settings: ['EMBED_FRAME_ANCESTORS', 'PUBLIC_BASE_URL', 'BOARD_APP_URL', 'ID_TOKEN_KEYRING_KEY'],
    // It signs: it decrypts the keyring's sealing key, once per execution environment.
    kms: ['Decrypt'],
  },
  embedScript: {
    entry: 'functions/embed-script.ts',
    description: 'GET /embed.js and GET /embed-board.js: the host and board application scripts',
    access: {},
    settings: [],
    logs: false,
  },
  discovery: {
    entry: 'functions/discovery.ts',
    description:
      'GET /.well-known/openid-configuration and GET /.well-known/jwks.json: how to verify ID tokens',
    // The keyring's public halves only (a projection); it holds no KMS permission, so nothing sealed opens.
    access: { signingKeys: ['GetItem'] },
    // PUBLIC_BASE_URL: the issuer, which must be the one the embed page signs as.
    settings: ['PUBLIC_BASE_URL'],
  },
  health: {
    entry: 'functions/health.ts',
    description: 'GET /health',
    access: {},
    settings: [],
    logs: false,
  },
  docs: {
    entry: 'functions/docs.ts',
    description:
      'GET /, GET /openapi.json and GET /docs: the index, the OpenAPI document and the reference page',
    access: {},
    settings: [],
    files: ['swagger-ui-dist/swagger-ui-bundle.js', 'swagger-ui-dist/swagger-ui.css'],
  },
} as const satisfies Record<string, FunctionDefinition>;

export type FunctionName = keyof typeof FUNCTIONS;

/** A function's memory and timeout: its own when its definition sets them, else the house defaults. */
export function runtimeOf(definition: FunctionDefinition): { memoryMb: number; timeoutSeconds: number } {
  return {
    memoryMb: definition.memoryMb ?? FUNCTION_MEMORY_MB,
    timeoutSeconds: definition.timeoutSeconds ?? FUNCTION_TIMEOUT_SECONDS,
  };
}

export interface RouteDefinition {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';
  /** The resource path; a `{name}` segment is a path parameter. */
  path: string;
  function: FunctionName;
  /**
   * `apiKey`: the TOKEN authorizer runs first and its context reaches the function. `iam`: API Gateway's
   * AWS_IAM authorization (a SigV4 signature of a principal allowed `execute-api:Invoke`), never an API
   * key: the operator's own backend; the caller's principal reaches the function in
   * `requestContext.identity`.
   */
  auth: 'apiKey' | 'iam' | 'none';
}

export const ROUTES: readonly RouteDefinition[] = [
  { method: 'POST', path: '/api/embed/sessions', function: 'createSession', auth: 'apiKey' },
  { method: 'GET', path: '/api/embed/sessions', function: 'listSessions', auth: 'apiKey' },
  { method: 'GET', path: '/api/embed/sessions/{id}', function: 'getSession', auth: 'apiKey' },
  { method: 'POST', path: '/api/embed/sessions/{id}/revoke', function: 'revokeSession', auth: 'apiKey' },
  // A static segment wins over {id} (in API Gateway and the local gateway alike), so no id can shadow it.
  { method: 'POST', path: '/api/embed/sessions/revoke', function: 'revokeUserSessions', auth: 'apiKey' },
  { method: 'GET', path: '/api/embed/events', function: 'listEvents', auth: 'apiKey' },
  { method: 'POST', path: '/api/embed/webhooks', function: 'createWebhook', auth: 'apiKey' },
  { method: 'GET', path: '/api/embed/webhooks', function: 'listWebhooks', auth: 'apiKey' },
  { method: 'DELETE', path: '/api/embed/webhooks/{id}', function: 'deleteWebhook', auth: 'apiKey' },
  {
    method: 'POST',
    path: '/api/embed/webhooks/{id}/rotate-secret',
    function: 'rotateWebhookSecret',
    auth: 'apiKey',
  },
  // The provisioning API: the operator's backend, signed with AWS credentials (docs/api.md#provisioning).
  { method: 'GET', path: '/admin/orgs/{orgId}/boards', function: 'provisioning', auth: 'iam' },
  { method: 'PUT', path: '/admin/orgs/{orgId}/boards/{boardId}', function: 'provisioning', auth: 'iam' },
  { method: 'DELETE', path: '/admin/orgs/{orgId}/boards/{boardId}', function: 'provisioning', auth: 'iam' },
  { method: 'GET', path: '/admin/orgs/{orgId}/members', function: 'provisioning', auth: 'iam' },
  { method: 'PUT', path: '/admin/orgs/{orgId}/members/{userId}', function: 'provisioning', auth: 'iam' },
  { method: 'DELETE', path: '/admin/orgs/{orgId}/members/{userId}', function: 'provisioning', auth: 'iam' },
  { method: 'GET', path: '/admin/api-keys', function: 'provisioning', auth: 'iam' },
  { method: 'POST', path: '/admin/api-keys', function: 'provisioning', auth: 'iam' },
  { method: 'POST', path: '/admin/api-keys/{keyId}/revoke', function: 'provisioning', auth: 'iam' },
  { method: 'GET', path: '/embed', function: 'embedPage', auth: 'none' },
  // As GET, without a body and without side effects (no binding): what link unfurlers send.
  { method: 'HEAD', path: '/embed', function: 'embedPage', auth: 'none' },
  // Where a board application sends its frame after its session ended: no token, nothing read.
  { method: 'GET', path: '/embed/ended', function: 'embedPage', auth: 'none' },
  { method: 'GET', path: '/embed.js', function: 'embedScript', auth: 'none' },
  { method: 'GET', path: '/embed-board.js', function: 'embedScript', auth: 'none' },
  { method: 'GET', path: '/.well-known/openid-configuration', function: 'discovery', auth: 'none' },
  { method: 'GET', path: '/.well-known/jwks.json', function: 'discovery', auth: 'none' },
  { method: 'GET', path: '/health', function: 'health', auth: 'none' },
  { method: 'GET', path: '/', function: 'docs', auth: 'none' },
  { method: 'GET', path: '/openapi.json', function: 'docs', auth: 'none' },
  { method: 'GET', path: '/docs', function: 'docs', auth: 'none' },
  { method: 'GET', path: '/docs/{asset}', function: 'docs', auth: 'none' },
];

/** The function that authorizes `auth: 'apiKey'` routes. */
export const AUTHORIZER_FUNCTION: FunctionName = 'authorizer';
