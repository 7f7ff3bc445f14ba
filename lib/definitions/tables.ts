/**
 * The DynamoDB tables, defined once. The CDK stack (`infra/`) and the local runtime (`local/`) both build
 * their tables from these definitions, so the two can never drift.
 */
export type AttributeType = 'S' | 'N';

export interface KeyDefinition {
  name: string;
  type: AttributeType;
}

export interface IndexDefinition {
  indexName: string;
  partitionKey: KeyDefinition;
}

export interface TableDefinition {
  /** Environment variable through which functions and the admin CLI receive the table name. */
  envVar: string;
  partitionKey: KeyDefinition;
  sortKey?: KeyDefinition;
  /** Global secondary indexes; all project every attribute. */
  indexes: readonly IndexDefinition[];
  /** Attribute holding the expiry in epoch seconds, for DynamoDB TTL. */
  timeToLiveAttribute?: string;
}

export const SESSION_TOKEN_INDEX = 'tokenHash-index';
export const API_KEY_ID_INDEX = 'keyId-index';

export const TABLES = {
  boards: { envVar: 'BOARDS_TABLE', partitionKey: { name: 'boardId', type: 'S' }, indexes: [] },
  memberships: {
    envVar: 'MEMBERSHIPS_TABLE',
    partitionKey: { name: 'orgId', type: 'S' },
    sortKey: { name: 'userId', type: 'S' },
    indexes: [],
  },
  apiKeys: {
    envVar: 'API_KEYS_TABLE',
    partitionKey: { name: 'keyHash', type: 'S' },
    indexes: [{ indexName: API_KEY_ID_INDEX, partitionKey: { name: 'keyId', type: 'S' } }],
  },
  sessions: {
    envVar: 'SESSIONS_TABLE',
    partitionKey: { name: 'id', type: 'S' },
    indexes: [{ indexName: SESSION_TOKEN_INDEX, partitionKey: { name: 'tokenHash', type: 'S' } }],
    timeToLiveAttribute: 'ttl',
  },
} as const satisfies Record<string, TableDefinition>;

export type TableKey = keyof typeof TABLES;
export const TABLE_KEYS = Object.keys(TABLES) as TableKey[];

/** Table names used by the local runtime and, by default, by the admin CLI. */
export const LOCAL_TABLE_NAMES: Record<TableKey, string> = {
  boards: 'embed-boards',
  memberships: 'embed-memberships',
  apiKeys: 'embed-api-keys',
  sessions: 'embed-sessions',
};
