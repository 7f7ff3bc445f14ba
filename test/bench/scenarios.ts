import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { CUTOFF_COPIES } from '#lib/adapters/dynamodb/cutoff-record-items';
import { compositeKey, SCOPE_WRITE_SHARDS, shardedScopeKey } from '#lib/adapters/dynamodb/session-items';
import { STATE_PAGE_SIZE } from '#lib/adapters/dynamodb/session-scopes';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import type { Item } from '#lib/adapters/dynamodb/table';
import type { FunctionName } from '#lib/definitions/routes';
import {
  MEMBERSHIP_USER_INDEX,
  SESSION_SCOPE_INDEXES,
  SESSION_TOKEN_INDEX,
  TABLE_KEYS,
  TABLES,
  type TableDefinition,
  type TableKey,
} from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import type { StoredSession } from '#lib/domain/session';
import { embedEvent, jsonEvent, proxyEvent } from '#test/support/events';
import { fullBody, storedSession } from '#test/support/fixtures';
import type { FloorCall } from './floor';

/**
 * What the benchmark feeds the bundles: the in-memory tables the DynamoDB stub starts with, the event of
 * each function's cold path with the DynamoDB calls its SDK floor sends in its place, and the Lambda-like
 * environment of every measured process.
 */

/**
 * The functions the benchmark holds against an SDK floor (health touches no table), by the name the
 * report gives each, in the report's order.
 */
export const DISPLAY_NAMES = {
  createSession: 'create-session',
  authorizer: 'authorizer',
  embedPage: 'embed page',
  getSession: 'get-session',
  listSessions: 'list-sessions',
  revokeSession: 'revoke-session',
  revokeUserSessions: 'revoke-user-sessions',
} as const satisfies Partial<Record<FunctionName, string>>;
export type BenchFunction = keyof typeof DISPLAY_NAMES;
export const BENCH_FUNCTIONS = Object.keys(DISPLAY_NAMES) as BenchFunction[];

const FIXTURE = {
  apiKey: `esk_${'A'.repeat(43)}`,
  keyId: 'key_bench',
  /** The API key owner every request comes from: a member of org-1. */
  keyOwner: 'user-member',
  /** Another member of org-1, who created some of the sessions the key owner can reach. */
  colleague: 'user-colleague',
  sessionToken: 'T'.repeat(32),
  publicBoardId: 'board-public',
  privateBoardId: 'board-private',
  orgId: 'org-1',
  /** The external user of the list page: sessions in both scopes, the org's only, the creator's only. */
  listUser: 'customer-list',
  /** The external user of the revoke-all path: a handful of sessions, each in both scopes. */
  revokeUser: 'customer-revoke',
} as const;

/** The list page: the newest 20 of these (the default page size), with a next cursor. */
const LIST_SESSIONS = { bothScopes: 20, orgOnly: 10, creatorOnly: 5 } as const;
/** Sessions of the revoke-all request path. */
const REVOKE_ALL_SESSIONS = 5;

const TABLE_NAMES = Object.fromEntries(TABLE_KEYS.map((key) => [key, `bench-${key}`])) as Record<
  TableKey,
  string
>;

/** One table as the stub receives it: its name, key attributes, indexes and plain (unmarshalled) items. */
export interface SeedTable {
  name: string;
  keys: string[];
  indexes: SeedIndex[];
  items: Item[];
}

export interface SeedIndex {
  name: string;
  partitionKey: string;
  sortKey?: string;
  projection: 'ALL' | 'KEYS_ONLY' | { include: readonly string[] };
}

/** A session id this service could have issued (a v4-shaped UUID), unique per group and number. */
function sessionId(group: number, n: number): string {
  return `${group.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

const SESSION_IDS = {
  embed: sessionId(1, 0),
  /** Created by the key owner on the public board (another organization): reached as its creator. */
  own: sessionId(2, 0),
  /** Created by a colleague on the private board: reached through the key owner's membership. */
  colleagues: sessionId(3, 0),
} as const;

/**
 * The sessions of one group, oldest first, one second apart so their positions (`createdAt#id`) are
 * distinct and ordered.
 */
function sessionsOf(
  group: number,
  count: number,
  fields: Partial<StoredSession>,
  expiresAt: string,
): StoredSession[] {
  return Array.from({ length: count }, (_, n) =>
    storedSession({
      id: sessionId(group, n),
      tokenHash: hashCredential(`bench-token-${group}-${n}`),
      createdAt: new Date(Date.UTC(2026, 0, 1) + group * 86_400_000 + n * 1_000).toISOString(),
      expiresAt,
      createdByKeyId: FIXTURE.keyId,
      ...fields,
    }),
  );
}

/**
 * The stub's starting data: two boards, two members of org-1, one active API key, and the sessions of
 * every request path. Session items are made by the session adapter itself (its PutItem is captured), so
 * they carry exactly the attributes and index keys the service writes.
 */
export async function seedTables(now = Date.now()): Promise<SeedTable[]> {
  const expiresAt = new Date(now + 365 * 86_400_000).toISOString();
  const onPrivateBoard = { boardId: FIXTURE.privateBoardId, orgId: FIXTURE.orgId };
  const onPublicBoard = { boardId: FIXTURE.publicBoardId, orgId: 'org-public' };
  const byKeyOwner = { createdByUserId: FIXTURE.keyOwner };
  const sessions: StoredSession[] = [
    storedSession({
      id: SESSION_IDS.embed,
      ...onPublicBoard,
      tokenHash: hashCredential(FIXTURE.sessionToken),
      userId: 'u-1',
      metadata: { team: 'core', seats: 12 },
      expiresAt,
      createdByUserId: 'user-other',
      // Opened before, as every load but a session's first: that one adds a conditional UpdateItem.
      openedAt: '2026-01-01T00:00:00.000Z',
    }),
    ...sessionsOf(2, 1, { ...onPublicBoard, ...byKeyOwner, userId: 'customer-own' }, expiresAt),
    ...sessionsOf(3, 1, { ...onPrivateBoard, createdByUserId: FIXTURE.colleague }, expiresAt),
    ...sessionsOf(
      4,
      LIST_SESSIONS.bothScopes,
      { ...onPrivateBoard, ...byKeyOwner, userId: FIXTURE.listUser },
      expiresAt,
    ),
    ...sessionsOf(
      5,
      LIST_SESSIONS.orgOnly,
      { ...onPrivateBoard, createdByUserId: FIXTURE.colleague, userId: FIXTURE.listUser },
      expiresAt,
    ),
    ...sessionsOf(
      6,
      LIST_SESSIONS.creatorOnly,
      { ...onPublicBoard, ...byKeyOwner, userId: FIXTURE.listUser },
      expiresAt,
    ),
    ...sessionsOf(
      7,
      REVOKE_ALL_SESSIONS,
      { ...onPrivateBoard, ...byKeyOwner, userId: FIXTURE.revokeUser },
      expiresAt,
    ),
  ];
  const created = '2026-01-01T00:00:00.000Z';
  const items: Record<TableKey, Item[]> = {
    signingKeys: [],
    boards: [
      { boardId: FIXTURE.publicBoardId, orgId: 'org-public', visibility: 'PUBLIC', name: 'Roadmap' },
      { boardId: FIXTURE.privateBoardId, orgId: FIXTURE.orgId, visibility: 'PRIVATE', name: 'Plans' },
    ],
    memberships: [
      { orgId: FIXTURE.orgId, userId: FIXTURE.keyOwner, createdAt: created },
      { orgId: FIXTURE.orgId, userId: FIXTURE.colleague, createdAt: created },
    ],
    apiKeys: [
      {
        keyHash: hashCredential(FIXTURE.apiKey),
        keyId: FIXTURE.keyId,
        userId: FIXTURE.keyOwner,
        name: null,
        status: 'ACTIVE',
        createdAt: created,
        revokedAt: null,
        // Used a moment ago: the bench measures the authorizer's every-request path, one read; its
        // last-use write comes once per cache period.
        lastUsedAt: '9999-12-31T23:59:59.999Z',
      },
    ],
    sessions: await Promise.all(sessions.map(sessionItem)),
    events: [],
    idempotency: [],
    webhooks: [],
  };
  return TABLE_KEYS.map((key) => {
    const { partitionKey, sortKey, indexes }: TableDefinition = TABLES[key];
    return {
      name: TABLE_NAMES[key],
      keys: sortKey ? [partitionKey.name, sortKey.name] : [partitionKey.name],
      indexes: indexes.map((index) => ({
        name: index.indexName,
        partitionKey: index.partitionKey.name,
        ...(index.sortKey ? { sortKey: index.sortKey.name } : {}),
        projection: index.projection,
      })),
      items: items[key],
    };
  });
}

/** The item the session adapter writes for `session`, captured from its PutItem. */
async function sessionItem(session: StoredSession): Promise<Item> {
  let item: Item | undefined;
  const capture = {
    send: async (command: { input: { Item?: Item } }) => {
      item = command.input.Item;
      return {};
    },
  } as unknown as DynamoDBDocumentClient;
  await new DynamoSessionRepository(capture, TABLE_NAMES.sessions).create(session);
  if (!item) throw new Error('the session adapter wrote no item');
  return item;
}

/**
 * The environment of every measured process, shaped like Lambda's: regional endpoint (no
 * DYNAMODB_ENDPOINT), credentials in the environment, and a HOME without ~/.aws so no local profile
 * changes what the SDK does. `seedFile` is the stub's starting data (see `seedTables`).
 */
export function lambdaEnvironment(home: string, seedFile: string): Record<string, string> {
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
    BENCH_SEED: seedFile,
  };
  for (const key of TABLE_KEYS) env[TABLES[key].envVar] = TABLE_NAMES[key];
  return env;
}

/** The authorizer context of the key owner, as API Gateway passes it to the functions. */
const CALLER = { userId: FIXTURE.keyOwner, keyId: FIXTURE.keyId, principalId: FIXTURE.keyOwner };

/** The create request of the benchmark: every optional field set, as a busy caller would send it. */
function createSessionEvent(boardId: string): APIGatewayProxyEvent {
  return jsonEvent(fullBody({ boardId, userId: 'customer-user-42' }), { authorizer: CALLER });
}

const authorizerEvent: APIGatewayTokenAuthorizerEvent = {
  type: 'TOKEN',
  authorizationToken: `Bearer ${FIXTURE.apiKey}`,
  methodArn: 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/api/embed/sessions',
};

function getSessionEvent(id: string): APIGatewayProxyEvent {
  return proxyEvent({
    method: 'GET',
    path: `/api/embed/sessions/${id}`,
    resource: '/api/embed/sessions/{id}',
    pathParameters: { id },
    authorizer: CALLER,
  });
}

function listSessionsEvent(query: Record<string, string>): APIGatewayProxyEvent {
  // API Gateway passes the Authorization header on: the list signs its cursors with a key derived from it.
  return proxyEvent({
    method: 'GET',
    path: '/api/embed/sessions',
    query,
    headers: { Authorization: `Bearer ${FIXTURE.apiKey}` },
    authorizer: CALLER,
  });
}

function revokeSessionEvent(id: string): APIGatewayProxyEvent {
  return proxyEvent({
    path: `/api/embed/sessions/${id}/revoke`,
    resource: '/api/embed/sessions/{id}/revoke',
    pathParameters: { id },
    body: null,
    authorizer: CALLER,
  });
}

/** POST /api/embed/sessions/revoke for one external user, across every scope the caller reaches. */
function revokeUserSessionsEvent(userId: string): APIGatewayProxyEvent {
  return jsonEvent({ userId }, { path: '/api/embed/sessions/revoke', authorizer: CALLER });
}

const sessionKey = (id: string) => ({ TableName: TABLE_NAMES.sessions, Key: { id } });
const orgUserKey = (userId: string) => compositeKey('org-user', FIXTURE.orgId, userId);
const creatorUserKey = (userId: string) => compositeKey('creator-user', FIXTURE.keyOwner, userId);
const revocation = {
  UpdateExpression: 'SET revokedAt = :at, revokedByUserId = :by, revokedByKeyId = :key',
  ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(revokedAt)',
  ExpressionAttributeValues: {
    ':at': '2026-06-01T00:00:00.000Z',
    ':by': FIXTURE.keyOwner,
    ':key': FIXTURE.keyId,
  },
};
/** The copies of each cut-off record (lib/adapters/dynamodb/cutoff-records.ts): each is written on its own. */
const COPY_NUMBERS = Array.from({ length: CUTOFF_COPIES }, (_, copy) => copy);

/**
 * One consistent BatchGetItem of these sessions and eleven cut-off records (none stored in the bench): the
 * records a session with an organization, a creator and a creating key may be covered by.
 */
function cutoffBatch(ids: readonly string[]): FloorCall {
  return {
    command: 'BatchGetCommand',
    input: {
      RequestItems: {
        [TABLE_NAMES.sessions]: {
          Keys: [
            ...ids.map((id) => ({ id })),
            ...Array.from({ length: 11 }, (_, n) => ({ id: `cutoff#floor-${n}` })),
          ],
          ConsistentRead: true,
        },
      },
    },
  };
}

/** The key owner's organizations: the membership index, then the consistent confirmation. */
const orgsOfKeyOwner: FloorCall[] = [
  {
    command: 'QueryCommand',
    input: {
      TableName: TABLE_NAMES.memberships,
      IndexName: MEMBERSHIP_USER_INDEX,
      KeyConditionExpression: 'userId = :u',
      ExpressionAttributeValues: { ':u': FIXTURE.keyOwner },
    },
  },
  {
    command: 'BatchGetCommand',
    input: {
      RequestItems: {
        [TABLE_NAMES.memberships]: {
          Keys: [{ orgId: FIXTURE.orgId, userId: FIXTURE.keyOwner }],
          ConsistentRead: true,
        },
      },
    },
  },
];
/** The scope indexes of an external user (the key owner's organization, its own), with their keys. */
function userScopes(userId: string): [string, string, string][] {
  return [
    ['orgUserShardKey', SESSION_SCOPE_INDEXES.orgUser, orgUserKey(userId)],
    ['creatorUserShardKey', SESSION_SCOPE_INDEXES.creatorUser, creatorUserKey(userId)],
  ];
}

/** One newest-first page of each write shard of each scope of an external user. */
function userScopePages(userId: string, limit: number): FloorCall[] {
  return userScopes(userId).flatMap(([attribute, index, value]) =>
    Array.from({ length: SCOPE_WRITE_SHARDS }, (_, shard) => ({
      command: 'QueryCommand' as const,
      input: {
        TableName: TABLE_NAMES.sessions,
        IndexName: index,
        KeyConditionExpression: `${attribute} = :pk`,
        ExpressionAttributeValues: { ':pk': shardedScopeKey(value, shard) },
        ScanIndexForward: false,
        Limit: limit,
      },
    })),
  );
}

/**
 * Revoke-all's count: the active sessions of each write shard of each scope up to the cut-off (the
 * caller's own scope leaving out its organization's, counted there), only what the scope does not fix.
 */
function userScopeCandidates(userId: string): FloorCall[] {
  return userScopes(userId).flatMap(([attribute, index, value]) =>
    Array.from({ length: SCOPE_WRITE_SHARDS }, (_, shard) => {
      const orgScope = attribute === 'orgUserShardKey';
      return {
        command: 'QueryCommand' as const,
        input: {
          TableName: TABLE_NAMES.sessions,
          IndexName: index,
          KeyConditionExpression: `${attribute} = :pk AND createdKey < :below`,
          FilterExpression: `expiresAt > :at AND attribute_not_exists(revokedAt)${orgScope ? '' : ' AND NOT orgId IN (:o0)'}`,
          ExpressionAttributeValues: {
            ':pk': shardedScopeKey(value, shard),
            ':below': '2026-06-01T00:00:00.000Z$',
            ':at': '2026-06-01T00:00:00.000Z',
            ...(orgScope ? {} : { ':o0': FIXTURE.orgId }),
          },
          ProjectionExpression: orgScope
            ? 'createdKey, boardId, createdByUserId, expiresAt'
            : 'createdKey, orgId, boardId, expiresAt',
          Limit: STATE_PAGE_SIZE,
        },
      };
    }),
  );
}

/** The ids of the list page: the user's sessions newest first (groups 6, 5, 4), the first 20. */
function listPageIds(): string[] {
  const newestFirst = (group: number, count: number) =>
    Array.from({ length: count }, (_, n) => sessionId(group, count - 1 - n));
  return [
    ...newestFirst(6, LIST_SESSIONS.creatorOnly),
    ...newestFirst(5, LIST_SESSIONS.orgOnly),
    ...newestFirst(4, LIST_SESSIONS.bothScopes),
  ].slice(0, 20);
}

const FLOOR_CALLS: Record<BenchFunction, FloorCall[]> = {
  createSession: [
    {
      command: 'GetCommand',
      input: { TableName: TABLE_NAMES.boards, Key: { boardId: FIXTURE.publicBoardId } },
    },
    // The key owner's membership: it decides whose user the session is.
    {
      command: 'GetCommand',
      input: {
        TableName: TABLE_NAMES.memberships,
        Key: { orgId: 'org-public', userId: FIXTURE.keyOwner },
        ConsistentRead: true,
      },
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
    // The session by the id its token derives: none, it is older than derived ids.
    {
      command: 'GetCommand',
      input: { TableName: TABLE_NAMES.sessions, Key: { id: 'floor-derived-id' }, ConsistentRead: true },
    },
    {
      command: 'QueryCommand',
      input: {
        TableName: TABLE_NAMES.sessions,
        IndexName: SESSION_TOKEN_INDEX,
        KeyConditionExpression: 'tokenHash = :h',
        ExpressionAttributeValues: { ':h': hashCredential(FIXTURE.sessionToken) },
        ProjectionExpression: 'id, boardId, orgId, userId, createdByUserId',
        Limit: 1,
      },
    },
    // The session and the nine cut-off records that could cover it (one copy of each), in one
    // consistent read.
    cutoffBatch([SESSION_IDS.embed]),
    {
      command: 'GetCommand',
      input: { TableName: TABLE_NAMES.boards, Key: { boardId: FIXTURE.publicBoardId } },
    },
  ],
  getSession: [
    { command: 'GetCommand', input: { ...sessionKey(SESSION_IDS.own), ConsistentRead: true } },
    cutoffBatch([]),
  ],
  listSessions: [
    ...orgsOfKeyOwner,
    // A page of 20 asks the scopes for 21 (one more tells whether another page follows): each write
    // shard for its share, ceil(21 / 16) + 1 = 3, newest first.
    ...userScopePages(FIXTURE.listUser, 3),
    // The org scope's shard 4 holds four of the user's 21 newest sessions in this fixture: the merge
    // empties its first page before the page is full and reads on below the third.
    {
      command: 'QueryCommand',
      input: {
        TableName: TABLE_NAMES.sessions,
        IndexName: SESSION_SCOPE_INDEXES.orgUser,
        KeyConditionExpression: 'orgUserShardKey = :pk AND createdKey < :below',
        ExpressionAttributeValues: {
          ':pk': shardedScopeKey(orgUserKey(FIXTURE.listUser), 4),
          ':below': '2026-01-05T00:00:19.000Z#00000004-0000-4000-8000-000000000013',
        },
        ScanIndexForward: false,
        Limit: 3,
      },
    },
    {
      command: 'GetCommand',
      input: {
        TableName: TABLE_NAMES.memberships,
        Key: { orgId: FIXTURE.orgId, userId: FIXTURE.colleague },
        ConsistentRead: true,
        ProjectionExpression: 'orgId',
      },
    },
    {
      command: 'BatchGetCommand',
      input: {
        RequestItems: {
          [TABLE_NAMES.sessions]: {
            // The 20 newest sessions of the user, the ones the page shows.
            Keys: listPageIds().map((id) => ({ id })),
            ConsistentRead: true,
          },
        },
      },
    },
    cutoffBatch([]),
  ],
  revokeSession: [
    { command: 'GetCommand', input: { ...sessionKey(SESSION_IDS.own), ConsistentRead: true } },
    cutoffBatch([]),
    {
      command: 'UpdateCommand',
      input: { ...sessionKey(SESSION_IDS.own), ...revocation, ReturnValues: 'ALL_NEW' },
    },
  ],
  revokeUserSessions: [
    ...orgsOfKeyOwner,
    // The first write of each of its two records, in every copy: a consistent read of the copy (and of
    // copy 0, which a new copy starts from), a conditional update.
    ...[0, 1].flatMap((n) => COPY_NUMBERS.flatMap((copy) => cutoffWrite(n, copy, false))),
    // The records it wrote, read again (what earlier cut-offs cover need not be counted).
    cutoffRecords(2),
    ...userScopeCandidates(FIXTURE.revokeUser),
    // The membership of each creator of a counted session (here the key owner alone), read once.
    {
      command: 'GetCommand',
      input: {
        TableName: TABLE_NAMES.memberships,
        Key: { orgId: FIXTURE.orgId, userId: FIXTURE.keyOwner },
        ConsistentRead: true,
        ProjectionExpression: 'orgId, createdAt',
      },
    },
    cutoffBatch([]),
    // The last write of each copy of each record, counted.
    ...[0, 1].flatMap((n) => COPY_NUMBERS.flatMap((copy) => cutoffWrite(n, copy, true))),
  ],
};

/** A consistent BatchGetItem of `count` cut-off records (none stored in the bench). */
function cutoffRecords(count: number): FloorCall {
  return cutoffReads(Array.from({ length: count }, (_, n) => `cutoff#floor-${n}`));
}

function cutoffReads(ids: readonly string[]): FloorCall {
  return {
    command: 'BatchGetCommand',
    input: {
      RequestItems: { [TABLE_NAMES.sessions]: { Keys: ids.map((id) => ({ id })), ConsistentRead: true } },
    },
  };
}

/**
 * One write of one copy of a cut-off record: its consistent read (with copy 0's, for the other copies),
 * then its update conditional on the revision read.
 */
function cutoffWrite(n: number, copy: number, counted: boolean): FloorCall[] {
  const entry = { at: '2026-06-01T00:00:00.000Z', byUserId: FIXTURE.keyOwner, byKeyId: FIXTURE.keyId };
  const id = `cutoff#floor-${n}${copy === 0 ? '' : `#${copy}`}`;
  return [
    cutoffReads(copy === 0 ? [id] : [id, `cutoff#floor-${n}`]),
    {
      command: 'UpdateCommand',
      input: {
        TableName: TABLE_NAMES.sessions,
        Key: { id },
        UpdateExpression: `SET cutoffScope = :scope, #rev = :next${copy === 0 ? '' : ', #copy = :copy'}, ${
          counted ? '#s0 = :s0, #cu = :cu, #ttl = :ttl' : '#s0 = :s0 REMOVE #ttl'
        }`,
        ConditionExpression: counted ? '#rev = :rev' : 'attribute_not_exists(id)',
        ExpressionAttributeNames: {
          '#rev': 'cutoffRevision',
          '#ttl': 'ttl',
          '#s0': 'entry:floor',
          ...(copy === 0 ? {} : { '#copy': 'cutoffCopy' }),
          ...(counted ? { '#cu': 'cutoffCoversUntil' } : {}),
        },
        ExpressionAttributeValues: {
          ':scope': `["floor",${n}]`,
          ':next': counted ? 2 : 1,
          ...(copy === 0 ? {} : { ':copy': copy }),
          ':s0': counted ? { ...entry, until: 1_800_000_000 } : entry,
          ...(counted ? { ':rev': 1, ':cu': 1_800_000_000, ':ttl': 1_800_000_000 } : {}),
        },
      },
    },
  ];
}

/** A function's cold path: the event it handles, the answer it must give, and its floor's calls. */
export interface ColdPath {
  label: string;
  event: unknown;
  /** HTTP status, or `allow` for an authorizer Allow policy; anything else means the bench is broken. */
  expect: number | 'allow';
  /** Text the response body must contain, where the status alone would not show the path did its work. */
  expectBody?: string;
  /** What the function's SDK floor sends instead: the same DynamoDB calls (run.ts checks the counts). */
  floorCalls: FloorCall[];
}

/**
 * The event each function handles in its cold-init runs. Its floor sends the same DynamoDB calls, so both
 * pay the SDK's first-request work (credentials, endpoint rules, signing, each command's serializer) and
 * the function is charged only for what it adds.
 */
export const COLD_PATHS: Record<BenchFunction, ColdPath> = {
  createSession: {
    label: 'create a session on a public board',
    event: createSessionEvent(FIXTURE.publicBoardId),
    expect: 201,
    floorCalls: FLOOR_CALLS.createSession,
  },
  authorizer: {
    label: 'allow an API key',
    event: authorizerEvent,
    expect: 'allow',
    floorCalls: FLOOR_CALLS.authorizer,
  },
  embedPage: {
    label: 'open the embed page of a board without an application',
    event: embedEvent({ token: FIXTURE.sessionToken }, { Accept: 'text/html' }),
    expect: 200,
    floorCalls: FLOOR_CALLS.embedPage,
  },
  getSession: {
    label: 'retrieve a session as its creator',
    event: getSessionEvent(SESSION_IDS.own),
    expect: 200,
    floorCalls: FLOOR_CALLS.getSession,
  },
  listSessions: {
    label: "list a user's sessions, a page of 20 with more after it",
    event: listSessionsEvent({ userId: FIXTURE.listUser }),
    expect: 200,
    expectBody: '"nextCursor":"',
    floorCalls: FLOOR_CALLS.listSessions,
  },
  revokeSession: {
    label: 'revoke a session as its creator',
    event: revokeSessionEvent(SESSION_IDS.own),
    expect: 200,
    floorCalls: FLOOR_CALLS.revokeSession,
  },
  revokeUserSessions: {
    label: `revoke all of a user's sessions (${REVOKE_ALL_SESSIONS}, in two scopes)`,
    event: revokeUserSessionsEvent(FIXTURE.revokeUser),
    expect: 200,
    expectBody: `{"revoked":${REVOKE_ALL_SESSIONS}}`,
    floorCalls: FLOOR_CALLS.revokeUserSessions,
  },
};
