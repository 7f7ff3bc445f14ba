import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_KEYS, TABLES, type TableDefinition } from '#lib/definitions/tables';
import type { Json } from '#test/support/infra';
import { resources, tableLogicalIds } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const synth = useSynthesized();
let tables: Record<string, Json>;
let ids: ReturnType<typeof tableLogicalIds>;

beforeAll(() => {
  tables = resources(synth.template, 'AWS::DynamoDB::Table');
  ids = tableLogicalIds(synth.template);
});

const tableOf = (key: (typeof TABLE_KEYS)[number]): Json => tables[ids[key]];

describe('DynamoDB tables', () => {
  it('streams the sessions table’s changes with old and new images (the session events), and no other table', () => {
    expect(tableOf('sessions').Properties.StreamSpecification).toEqual({
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    });
    for (const key of TABLE_KEYS.filter((k) => k !== 'sessions')) {
      expect(tableOf(key).Properties.StreamSpecification, key).toBeUndefined();
    }
  });

  it('keeps events 30 days by TTL, found by owner, by session and by owner and type, newest first', () => {
    const props = tableOf('events').Properties;
    expect(props.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(props.GlobalSecondaryIndexes.map((i: Json) => [i.IndexName, i.Projection])).toEqual([
      ['owner-index', { ProjectionType: 'ALL' }],
      ['session-index', { ProjectionType: 'ALL' }],
      // Keys only: a page narrowed by type reads the events it answers by their key.
      ['ownerType-index', { ProjectionType: 'KEYS_ONLY' }],
    ]);
    expect(props.GlobalSecondaryIndexes.map((i: Json) => [i.IndexName, i.KeySchema])).toEqual([
      [
        'owner-index',
        [
          { AttributeName: 'ownerUserId', KeyType: 'HASH' },
          { AttributeName: 'position', KeyType: 'RANGE' },
        ],
      ],
      [
        'session-index',
        [
          { AttributeName: 'sessionId', KeyType: 'HASH' },
          { AttributeName: 'position', KeyType: 'RANGE' },
        ],
      ],
      [
        'ownerType-index',
        [
          { AttributeName: 'ownerType', KeyType: 'HASH' },
          { AttributeName: 'position', KeyType: 'RANGE' },
        ],
      ],
    ]);
  });

  it('creates exactly one table per shared table definition', () => {
    expect(Object.keys(tables)).toHaveLength(TABLE_KEYS.length);
  });

  it.each(TABLE_KEYS)('gives the %s table the keys of its definition', (key) => {
    const definition: TableDefinition = TABLES[key];
    const props = tableOf(key).Properties;
    const expectedSchema = [{ AttributeName: definition.partitionKey.name, KeyType: 'HASH' }];
    if (definition.sortKey) expectedSchema.push({ AttributeName: definition.sortKey.name, KeyType: 'RANGE' });
    expect(props.KeySchema).toEqual(expectedSchema);
    const keys = [
      definition.partitionKey,
      definition.sortKey,
      ...definition.indexes.map((i) => i.partitionKey),
    ];
    for (const attribute of keys.filter((k) => k !== undefined)) {
      expect(props.AttributeDefinitions).toContainEqual({
        AttributeName: attribute.name,
        AttributeType: attribute.type,
      });
    }
  });

  it('gives the sessions table its token index (every attribute) and four write-sharded scope indexes, three projecting the state the count reads', () => {
    const state = {
      ProjectionType: 'INCLUDE',
      NonKeyAttributes: ['orgId', 'userId', 'boardId', 'createdByUserId', 'expiresAt', 'revokedAt'],
    };
    const byCreated = (partitionKey: string) => [
      { AttributeName: partitionKey, KeyType: 'HASH' },
      { AttributeName: 'createdKey', KeyType: 'RANGE' },
    ];
    expect(tableOf('sessions').Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'tokenHash-index',
        KeySchema: [{ AttributeName: 'tokenHash', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: 'orgUser-index',
        KeySchema: byCreated('orgUserShardKey'),
        Projection: state,
      },
      {
        IndexName: 'creatorUser-index',
        KeySchema: byCreated('creatorUserShardKey'),
        Projection: state,
      },
      {
        IndexName: 'board-index',
        KeySchema: byCreated('boardShardKey'),
        Projection: state,
      },
      {
        IndexName: 'creatorBoard-index',
        KeySchema: byCreated('creatorBoardShardKey'),
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
  });

  it('gives the memberships table a keys-only index of each user’s organizations', () => {
    expect(tableOf('memberships').Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'userId-index',
        KeySchema: [
          { AttributeName: 'userId', KeyType: 'HASH' },
          { AttributeName: 'orgId', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
  });

  it('gives the API keys table its key-id index, and the boards table none', () => {
    expect(tableOf('apiKeys').Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'keyId-index',
        KeySchema: [{ AttributeName: 'keyId', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    expect(tableOf('boards').Properties.GlobalSecondaryIndexes).toBeUndefined();
  });

  it.each(TABLE_KEYS)('enables TTL on the %s table exactly when its definition names an attribute', (key) => {
    const definition: TableDefinition = TABLES[key];
    const ttl = tableOf(key).Properties.TimeToLiveSpecification;
    if (definition.timeToLiveAttribute) {
      expect(ttl).toEqual({ AttributeName: definition.timeToLiveAttribute, Enabled: true });
    } else {
      expect(ttl).toBeUndefined();
    }
  });

  it('expires sessions through the ttl attribute', () => {
    expect(tableOf('sessions').Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'ttl',
      Enabled: true,
    });
  });

  it.each(TABLE_KEYS)('bills the %s table on demand', (key) => {
    expect(tableOf(key).Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(tableOf(key).Properties.ProvisionedThroughput).toBeUndefined();
  });

  it.each(TABLE_KEYS)('enables point-in-time recovery on the %s table', (key) => {
    expect(tableOf(key).Properties.PointInTimeRecoverySpecification).toEqual({
      PointInTimeRecoveryEnabled: true,
    });
  });

  it.each(TABLE_KEYS)('keeps the %s table on stack deletion and replacement', (key) => {
    expect(tableOf(key).DeletionPolicy).toBe('Retain');
    expect(tableOf(key).UpdateReplacePolicy).toBe('Retain');
  });

  it.each(TABLE_KEYS)('turns on deletion protection for the %s table', (key) => {
    expect(tableOf(key).Properties.DeletionProtectionEnabled).toBe(true);
  });

  it.each(TABLE_KEYS)('encrypts the %s table with the AWS-managed KMS key', (key) => {
    expect(tableOf(key).Properties.SSESpecification).toEqual({ SSEEnabled: true });
  });

  it('lets CloudFormation name the tables, so two stages can share an account', () => {
    for (const table of Object.values(tables)) expect(table.Properties.TableName).toBeUndefined();
  });
});
