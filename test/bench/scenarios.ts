import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { type DynamoAction, FUNCTIONS, type FunctionName } from '#lib/definitions/routes';
import {
  SESSION_TOKEN_INDEX,
  TABLE_KEYS,
  TABLES,
  type TableDefinition,
  type TableKey,
} from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import { embedEvent, jsonEvent } from '#test/support/events';
import { fullBody } from '#test/support/fixtures';

/**
 * What the benchmark feeds the bundles: the in-memory tables the DynamoDB stub starts with, one event per
 * request path, and the Lambda-like environment of every measured process.
 */

/** The functions the benchmark holds against an SDK floor (health touches no table). */
export const BENCH_FUNCTIONS = [
  'createSession',
  'authorizer',
  'embedPage',
] as const satisfies readonly FunctionName[];
export type BenchFunction = (typeof BENCH_FUNCTIONS)[number];

export const DISPLAY_NAMES: Record<BenchFunction, string> = {
  createSession: 'create-session',
  authorizer: 'authorizer',
  embedPage: 'embed page',
};

const FIXTURE = {
  apiKey: `esk_${'A'.repeat(43)}`,
  keyOwner: 'user-member',
  sessionToken: 'T'.repeat(32),
  publicBoardId: 'board-public',
  privateBoardId: 'board-private',
  orgId: 'org-1',
} as const;

const TABLE_NAMES = Object.fromEntries(TABLE_KEYS.map((key) => [key, `bench-${key}`])) as Record<
  TableKey,
  string
>;

/** One table as the stub receives it: its name, key attributes and plain (unmarshalled) items. */
export interface SeedTable {
  name: string;
  keys: string[];
  items: Record<string, string | number | boolean | null>[];
}

/** The stub's starting data: two boards, one membership, one active API key, one live session. */
export function seedTables(now = Date.now()): SeedTable[] {
  const expiresAt = new Date(now + 365 * 86_400_000).toISOString();
  const items: Record<TableKey, SeedTable['items']> = {
    boards: [
      { boardId: FIXTURE.publicBoardId, orgId: 'org-public', visibility: 'PUBLIC', name: 'Roadmap' },
      { boardId: FIXTURE.privateBoardId, orgId: FIXTURE.orgId, visibility: 'PRIVATE', name: 'Plans' },
    ],
    memberships: [{ orgId: FIXTURE.orgId, userId: FIXTURE.keyOwner, createdAt: '2026-01-01T00:00:00.000Z' }],
    apiKeys: [
      {
        keyHash: hashCredential(FIXTURE.apiKey),
        keyId: 'key_bench',
        userId: FIXTURE.keyOwner,
        name: null,
        status: 'ACTIVE',
        createdAt: '2026-01-01T00:00:00.000Z',
        revokedAt: null,
      },
    ],
    sessions: [
      {
        id: 'session-bench',
        boardId: FIXTURE.publicBoardId,
        tokenHash: hashCredential(FIXTURE.sessionToken),
        userId: 'u-1',
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        avatarUrl: null,
        plan: 'pro',
        metadata: '{"team":"core","seats":12}',
        createdAt: '2026-01-01T00:00:00.000Z',
        expiresAt,
        ttl: Math.ceil(Date.parse(expiresAt) / 1000),
      },
    ],
    idempotency: [],
  };
  return TABLE_KEYS.map((key) => {
    const { partitionKey, sortKey }: TableDefinition = TABLES[key];
    return {
      name: TABLE_NAMES[key],
      keys: sortKey ? [partitionKey.name, sortKey.name] : [partitionKey.name],
      items: items[key],
    };
  });
}

/**
 * The environment of every measured process, shaped like Lambda's: regional endpoint (no
 * DYNAMODB_ENDPOINT), credentials in the environment, and a HOME without ~/.aws so no local profile
 * changes what the SDK does.
 */
export function lambdaEnvironment(home: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'ASIABENCHMARKEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'bench-secret-access-key',
    AWS_SESSION_TOKEN: 'bench-session-token',
    AWS_LAMBDA_FUNCTION_NAME: 'bench',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    LOG_LEVEL: 'info',
    // Lambda runs Node 24; this machine's Node may be older, and the SDK's warning is not our cost.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    BENCH_SEED: JSON.stringify(seedTables()),
  };
  for (const key of TABLE_KEYS) env[TABLES[key].envVar] = TABLE_NAMES[key];
  return env;
}

/** The create request of the benchmark: every optional field set, as a busy caller would send it. */
function createSessionEvent(boardId: string): APIGatewayProxyEvent {
  return jsonEvent(fullBody({ boardId, userId: 'customer-user-42' }), {
    authorizer: { userId: FIXTURE.keyOwner, keyId: 'key_bench', principalId: FIXTURE.keyOwner },
  });
}

const authorizerEvent: APIGatewayTokenAuthorizerEvent = {
  type: 'TOKEN',
  authorizationToken: `Bearer ${FIXTURE.apiKey}`,
  methodArn: 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/api/embed/sessions',
};

/** A request path: one event of one function, the result it must produce and the DynamoDB calls allowed. */
export interface RequestPath {
  id: string;
  label: string;
  function: BenchFunction;
  event: unknown;
  /** HTTP status, or `allow` for an authorizer Allow policy; anything else means the bench is broken. */
  expect: number | 'allow';
  /** Target DynamoDB calls per request (issue 5): exactly, or at most, `calls`. */
  calls: number;
  callsRule: 'exactly' | 'at most';
}

export const REQUEST_PATHS: readonly RequestPath[] = [
  {
    id: 'create-public',
    label: 'create session, public board',
    function: 'createSession',
    event: createSessionEvent(FIXTURE.publicBoardId),
    expect: 201,
    calls: 2,
    callsRule: 'exactly',
  },
  {
    id: 'create-private',
    label: 'create session, private board (membership)',
    function: 'createSession',
    event: createSessionEvent(FIXTURE.privateBoardId),
    expect: 201,
    calls: 3,
    callsRule: 'exactly',
  },
  {
    id: 'authorizer',
    label: 'authorizer',
    function: 'authorizer',
    event: authorizerEvent,
    expect: 'allow',
    calls: 1,
    callsRule: 'exactly',
  },
  {
    id: 'embed',
    label: 'embed page',
    function: 'embedPage',
    event: embedEvent({ token: FIXTURE.sessionToken }, { Accept: 'text/html' }),
    expect: 200,
    calls: 2,
    callsRule: 'at most',
  },
];

/** The path whose event a function handles in its cold-init runs (the one its SDK floor mirrors). */
export const COLD_PATH: Record<BenchFunction, string> = {
  createSession: 'create-public',
  authorizer: 'authorizer',
  embedPage: 'embed',
};

/**
 * The SDK floor of each function (issue 5): construct a DynamoDBDocumentClient and reference the commands
 * the function uses. Its "one event" sends each command once, the same calls the function makes on its
 * cold path, so both pay the SDK's first-request work (credentials, endpoint rules, signing).
 */
type FloorCall = {
  command:
    | 'GetCommand'
    | 'BatchGetCommand'
    | 'PutCommand'
    | 'UpdateCommand'
    | 'DeleteCommand'
    | 'QueryCommand';
  input: Record<string, unknown>;
};

export const FLOOR_CALLS: Record<BenchFunction, FloorCall[]> = {
  createSession: [
    {
      command: 'GetCommand',
      input: { TableName: TABLE_NAMES.boards, Key: { boardId: FIXTURE.publicBoardId } },
    },
    {
      command: 'PutCommand',
      input: {
        TableName: TABLE_NAMES.sessions,
        Item: { id: 'floor-session', boardId: FIXTURE.publicBoardId },
      },
    },
  ],
  authorizer: [
    {
      command: 'GetCommand',
      input: {
        TableName: TABLE_NAMES.apiKeys,
        Key: { keyHash: hashCredential(FIXTURE.apiKey) },
        ConsistentRead: true,
      },
    },
  ],
  embedPage: [
    {
      command: 'QueryCommand',
      input: {
        TableName: TABLE_NAMES.sessions,
        IndexName: SESSION_TOKEN_INDEX,
        KeyConditionExpression: 'tokenHash = :h',
        ExpressionAttributeValues: { ':h': hashCredential(FIXTURE.sessionToken) },
        Limit: 1,
      },
    },
    {
      command: 'GetCommand',
      input: { TableName: TABLE_NAMES.boards, Key: { boardId: FIXTURE.publicBoardId } },
    },
  ],
};

/** The document-client command of each DynamoDB action a function may perform. */
const COMMAND_OF: Record<DynamoAction, FloorCall['command']> = {
  GetItem: 'GetCommand',
  BatchGetItem: 'BatchGetCommand',
  PutItem: 'PutCommand',
  UpdateItem: 'UpdateCommand',
  DeleteItem: 'DeleteCommand',
  Query: 'QueryCommand',
};

/**
 * The source of a function's SDK floor entry. Its commands must be exactly those of the function's access
 * list in lib/definitions/routes.ts, so a function that starts using another command moves its floor with it.
 */
export function floorSource(fn: BenchFunction): string {
  const calls = FLOOR_CALLS[fn];
  const commands = [...new Set(calls.map((call) => call.command))].sort();
  const allowed = Object.values(FUNCTIONS[fn].access as Record<string, readonly DynamoAction[]>).flat();
  const expected = [...new Set(allowed.map((action) => COMMAND_OF[action]))].sort();
  if (commands.join() !== expected.join()) {
    throw new Error(
      `the SDK floor of ${fn} uses ${commands.join(', ')}; lib/definitions/routes.ts says ${expected.join(', ')}`,
    );
  }
  return `// Generated by test/bench: the SDK floor of ${fn}. Do not edit.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ${commands.join(', ')} } from '@aws-sdk/lib-dynamodb';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export const handler = async () => {
${calls.map((call) => `  await db.send(new ${call.command}(${JSON.stringify(call.input)}));`).join('\n')}
  return { statusCode: 200 };
};
`;
}

/** The source of the empty handler: what Node itself costs to import and run an ES module. */
export const EMPTY_HANDLER_SOURCE = `// Generated by test/bench: an empty handler, for reference. Do not edit.
export const handler = async () => ({ statusCode: 200 });
`;
