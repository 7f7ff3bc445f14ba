/**
 * The DynamoDB tables, defined once. The CDK stack (`infra/`) and the local runtime (`local/`) both build
 * their tables from these definitions, so the two can never drift.
 */
import type { SessionScope } from '#lib/domain/ports';

export type AttributeType = 'S' | 'N';

export interface KeyDefinition {
  name: string;
  type: AttributeType;
}

/**
 * What an index copies from each item: everything, only the keys, or the keys and some attributes.
 * Indexes that only locate items copy nothing that changes, so an update (a revocation) writes to the
 * table alone and never to them.
 */
export type IndexProjection = 'ALL' | 'KEYS_ONLY' | { include: readonly string[] };

export interface IndexDefinition {
  indexName: string;
  partitionKey: KeyDefinition;
  sortKey?: KeyDefinition;
  projection: IndexProjection;
}

export interface TableDefinition {
  /** Environment variable through which functions and the admin CLI receive the table name. */
  envVar: string;
  partitionKey: KeyDefinition;
  sortKey?: KeyDefinition;
  /** Global secondary indexes. */
  indexes: readonly IndexDefinition[];
  /** Attribute holding the expiry in epoch seconds, for DynamoDB TTL. */
  timeToLiveAttribute?: string;
  /** A DynamoDB stream of the table's changes, with both images: what the session events derive from. */
  stream?: 'NEW_AND_OLD_IMAGES';
}

export const SESSION_TOKEN_INDEX = 'tokenHash-index';
export const API_KEY_ID_INDEX = 'keyId-index';
export const MEMBERSHIP_USER_INDEX = 'userId-index';
export const EVENT_OWNER_INDEX = 'owner-index';
export const EVENT_SESSION_INDEX = 'session-index';
export const EVENT_TYPE_INDEX = 'ownerType-index';

/**
 * The session indexes behind listing and revoke-all, one per way a caller can reach a session (see
 * SessionScope in lib/domain/ports.ts). Each sorts by `createdKey` (`createdAt#id`), newest first when
 * read backwards. Their partition keys are write-sharded: `<scope key>#<shard>`, the shard fixed per
 * session (lib/adapters/dynamodb/sessions.ts, `sessionShard`), so one scope's writes spread over several
 * partitions and a read of the scope queries every shard. Composite scope keys are SHA-256 hashes of
 * their parts: fixed length, so two ids of 256 characters each never exceed DynamoDB's key size, and no
 * separator can be forged inside an id.
 */
export const SESSION_SCOPE_INDEXES: Readonly<Record<SessionScope['kind'], string>> = {
  orgUser: 'orgUser-index',
  creatorUser: 'creatorUser-index',
  board: 'board-index',
  creatorBoard: 'creatorBoard-index',
};

/**
 * What revoke-all's count reads of a session from the scope index it counts (the key, `id` and
 * `createdKey` come with every entry): enough to tell whether the session was active at a cut-off and
 * which cut-off records could cover it, so the count is index queries alone. Projecting `revokedAt` means
 * a single revocation writes these indexes too.
 */
export const SESSION_STATE_ATTRIBUTES = [
  'orgId',
  'userId',
  'boardId',
  'createdByUserId',
  'expiresAt',
  'revokedAt',
] as const;

/** The environment variable naming each table in a function's environment. */
export const TABLE_ENV_VARS = {
  boards: 'BOARDS_TABLE',
  memberships: 'MEMBERSHIPS_TABLE',
  apiKeys: 'API_KEYS_TABLE',
  sessions: 'SESSIONS_TABLE',
  events: 'EVENTS_TABLE',
  webhooks: 'WEBHOOKS_TABLE',
  idempotency: 'IDEMPOTENCY_TABLE',
  signingKeys: 'SIGNING_KEYS_TABLE',
} as const;

export type TableKey = keyof typeof TABLE_ENV_VARS;

/** The attribute DynamoDB's time to live reads, on every table that has one. */
export const TTL_ATTRIBUTE = 'ttl';

const CREATED: KeyDefinition = { name: 'createdKey', type: 'S' };
// The partition keys of the scope indexes revoke-all counts through, and what those indexes copy.
const ORG_USER_SHARD: KeyDefinition = { name: 'orgUserShardKey', type: 'S' };
const CREATOR_SHARD: KeyDefinition = { name: 'creatorUserShardKey', type: 'S' };
const BOARD_SHARD: KeyDefinition = { name: 'boardShardKey', type: 'S' };
const STATE: IndexProjection = { include: SESSION_STATE_ATTRIBUTES };
// The events' indexes: by owner or by session, in the order of their `position`.
const EVENT_OWNER: KeyDefinition = { name: 'ownerUserId', type: 'S' };
const EVENT_SESSION: KeyDefinition = { name: 'sessionId', type: 'S' };
const EVENT_OWNER_TYPE: KeyDefinition = { name: 'ownerType', type: 'S' };
const POSITION: KeyDefinition = { name: 'position', type: 'S' };

export const TABLES = {
  boards: { envVar: TABLE_ENV_VARS.boards, partitionKey: { name: 'boardId', type: 'S' }, indexes: [] },
  memberships: {
    envVar: TABLE_ENV_VARS.memberships,
    partitionKey: { name: 'orgId', type: 'S' },
    sortKey: { name: 'userId', type: 'S' },
    indexes: [
      // The organizations of a key owner, for listing; every hit is confirmed by a consistent read.
      {
        indexName: MEMBERSHIP_USER_INDEX,
        partitionKey: { name: 'userId', type: 'S' },
        sortKey: { name: 'orgId', type: 'S' },
        projection: 'KEYS_ONLY',
      },
    ],
  },
  apiKeys: {
    envVar: TABLE_ENV_VARS.apiKeys,
    partitionKey: { name: 'keyHash', type: 'S' },
    indexes: [{ indexName: API_KEY_ID_INDEX, partitionKey: { name: 'keyId', type: 'S' }, projection: 'ALL' }],
  },
  sessions: {
    envVar: TABLE_ENV_VARS.sessions,
    partitionKey: { name: 'id', type: 'S' },
    indexes: [
      { indexName: SESSION_TOKEN_INDEX, partitionKey: { name: 'tokenHash', type: 'S' }, projection: 'ALL' },
      {
        indexName: SESSION_SCOPE_INDEXES.orgUser,
        partitionKey: ORG_USER_SHARD,
        sortKey: CREATED,
        projection: STATE,
      },
      {
        indexName: SESSION_SCOPE_INDEXES.creatorUser,
        partitionKey: CREATOR_SHARD,
        sortKey: CREATED,
        projection: STATE,
      },
      {
        indexName: SESSION_SCOPE_INDEXES.board,
        partitionKey: BOARD_SHARD,
        sortKey: CREATED,
        projection: STATE,
      },
      // Listing only (revoke-all never counts through it): keys alone, so a revocation does not write it.
      {
        indexName: SESSION_SCOPE_INDEXES.creatorBoard,
        partitionKey: { name: 'creatorBoardShardKey', type: 'S' },
        sortKey: CREATED,
        projection: 'KEYS_ONLY',
      },
    ],
    timeToLiveAttribute: TTL_ATTRIBUTE,
    // The session events (docs/events.md) derive from each change of an item, old and new image.
    stream: 'NEW_AND_OLD_IMAGES',
  },
  events: {
    envVar: TABLE_ENV_VARS.events,
    // `pk`: an event's id (`sk` = `event`), or one partition of an expiry bucket (`due#<minute>#<0-15>`;
    // `due#<minute>` for notes written before the partitions), `sk` = a session id.
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    indexes: [
      // A key owner's events, newest first (`occurredAt#id`): the events API.
      { indexName: EVENT_OWNER_INDEX, partitionKey: EVENT_OWNER, sortKey: POSITION, projection: 'ALL' },
      // One session's events (at most five): the events API asked for one session.
      { indexName: EVENT_SESSION_INDEX, partitionKey: EVENT_SESSION, sortKey: POSITION, projection: 'ALL' },
      // A key owner's events of one type (`<type>#<owner>`), newest first: the events API asked for a type
      // reads only what it answers. Keys only: the page's events are then read by their key.
      {
        indexName: EVENT_TYPE_INDEX,
        partitionKey: EVENT_OWNER_TYPE,
        sortKey: POSITION,
        projection: 'KEYS_ONLY',
      },
    ],
    // Events are kept 30 days; DynamoDB deletes them some time after.
    timeToLiveAttribute: TTL_ATTRIBUTE,
  },
  // Webhook endpoints, partitioned by their owner (the API key owner): a tenant only ever reads its own.
  webhooks: {
    envVar: TABLE_ENV_VARS.webhooks,
    partitionKey: { name: 'ownerUserId', type: 'S' },
    sortKey: { name: 'webhookId', type: 'S' },
    indexes: [],
    // A deleted endpoint's tombstone is kept 24 hours (a repeated delete is recognised); DynamoDB deletes it after.
    timeToLiveAttribute: TTL_ATTRIBUTE,
  },
  idempotency: {
    envVar: TABLE_ENV_VARS.idempotency,
    partitionKey: { name: 'recordId', type: 'S' },
    indexes: [],
    // Records are remembered for 24 hours; DynamoDB deletes them some time after.
    timeToLiveAttribute: TTL_ATTRIBUTE,
  },
  // The keyring of the keys that sign ID tokens and logout tokens (lib/domain/keyring.ts): one item per
  // stage, `keyringId` = `id-token`. Its private halves are sealed to a key only KMS opens.
  signingKeys: {
    envVar: TABLE_ENV_VARS.signingKeys,
    partitionKey: { name: 'keyringId', type: 'S' },
    indexes: [],
  },
} as const satisfies Record<TableKey, TableDefinition>;

export const TABLE_KEYS = Object.keys(TABLE_ENV_VARS) as TableKey[];

/** Table names used by the local runtime and, by default, by the admin CLI. */
export const LOCAL_TABLE_NAMES: Record<TableKey, string> = {
  boards: 'embed-boards',
  memberships: 'embed-memberships',
  apiKeys: 'embed-api-keys',
  sessions: 'embed-sessions',
  events: 'embed-events',
  idempotency: 'embed-idempotency',
  webhooks: 'embed-webhooks',
  signingKeys: 'embed-signing-keys',
};
