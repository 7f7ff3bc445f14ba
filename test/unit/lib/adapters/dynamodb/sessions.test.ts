import { createHash } from 'node:crypto';
import { QueryCommand as WireQueryCommand } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { DynamoCoveredSessions } from '#lib/adapters/dynamodb/covered-sessions';
import { CUTOFF_COPIES, cutoffCopyOf, cutoffId } from '#lib/adapters/dynamodb/cutoff-record-items';
import { CUTOFF_WRITE_TRIES } from '#lib/adapters/dynamodb/cutoff-record-updates';
import { DynamoCutoffRecords } from '#lib/adapters/dynamodb/cutoff-records';
import { SCOPE_WRITE_SHARDS, sessionShard, shardedScopeKey } from '#lib/adapters/dynamodb/session-items';
import { STATE_PAGE_SIZE } from '#lib/adapters/dynamodb/session-scopes';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { SESSION_TOKEN_INDEX } from '#lib/definitions/tables';
import type { CutoffScope } from '#lib/domain/cutoffs';
import { CutoffContentionError, StorageUnavailableError } from '#lib/domain/errors';
import type { StoredSession } from '#lib/domain/session';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { mockedDocumentClient } from '#test/support/dynamo-mock';
import { storedSession } from '#test/support/fixtures';

const { ddb, db } = mockedDocumentClient();
const repository = new DynamoSessionRepository(db, 'sessions-t');
/** The cut-off record writes, in the same table. */
const cutoffRecords = new DynamoCutoffRecords(db, 'sessions-t');

const SESSION: StoredSession = storedSession({
  id: '3f2c1e0a-0000-4000-8000-000000000001',
  boardId: 'board-1',
  metadata: { team: 'analytics', nested: { list: [1, 'two', null] } },
});
const REVOCATION = { revokedAt: '2026-01-02T00:00:00.000Z', byUserId: 'owner-1', byKeyId: 'key_1' };
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
/** SESSION's write shard: the first byte of SHA-256 of its id, modulo the shard count. */
const SHARD = (createHash('sha256').update(SESSION.id).digest()[0] as number) % SCOPE_WRITE_SHARDS;
const ORG_USER = sha256(JSON.stringify(['org-user', SESSION.orgId, SESSION.userId]));
const CREATOR_USER = sha256(JSON.stringify(['creator-user', SESSION.createdByUserId, SESSION.userId]));
const CREATOR_BOARD = sha256(JSON.stringify(['creator-board', SESSION.createdByUserId, SESSION.boardId]));
/** The item the adapter writes for SESSION: the stored session plus TTL, sort key and scope keys. */
const SESSION_ITEM = {
  ...SESSION,
  revokedAt: undefined,
  revokedByUserId: undefined,
  revokedByKeyId: undefined,
  metadata: JSON.stringify(SESSION.metadata),
  ttl: Date.parse('2026-01-31T00:00:00.000Z') / 1000,
  createdKey: `${SESSION.createdAt}#${SESSION.id}`,
  orgUserShardKey: `${ORG_USER}#${SHARD}`,
  creatorUserShardKey: `${CREATOR_USER}#${SHARD}`,
  boardShardKey: `${SESSION.boardId}#${SHARD}`,
  creatorBoardShardKey: `${CREATOR_BOARD}#${SHARD}`,
};
/** As SESSION_ITEM, without the attributes that are written only when set (revocation and binding). */
const {
  revokedAt: _a,
  revokedByUserId: _b,
  revokedByKeyId: _c,
  bindToBrowser: _d,
  bindingHash: _e,
  boundAt: _f,
  ...STORED_ITEM
} = SESSION_ITEM;
const BINDING = { bindingHash: 'b'.repeat(64), boundAt: '2026-01-01T00:05:00.000Z' };

describe('DynamoSessionRepository.create', () => {
  it('sends exactly one conditional PutCommand that cannot overwrite another session', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(SESSION);
    expect(ddb.calls()).toHaveLength(1);
    const [put] = ddb.commandCalls(PutCommand);
    expect(put?.args[0].input).toMatchObject({
      TableName: 'sessions-t',
      ConditionExpression: 'attribute_not_exists(id)',
    });
  });

  it('stores every session field, the TTL in epoch seconds, metadata as its JSON text and the index keys', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(SESSION);
    // With the copy of the cut-off records its loads read (session-cutoff-copy.test.ts).
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toEqual({
      ...STORED_ITEM,
      readsCutoffCopy: cutoffCopyOf(SESSION.id),
    });
  });

  it('hashes composite index keys so that no id can forge another scope with a separator', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create({ ...SESSION, orgId: 'a#b', userId: 'c' });
    await repository.create({ ...SESSION, orgId: 'a', userId: 'b#c' });
    const [first, second] = ddb
      .commandCalls(PutCommand)
      .map((call) => call.args[0].input.Item?.orgUserShardKey);
    expect(first).toMatch(/^[0-9a-f]{64}#\d+$/);
    expect(first).not.toBe(second);
  });

  it('rounds the TTL up to the next whole second', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create({ ...SESSION, expiresAt: '2026-01-31T00:00:00.001Z' });
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item?.ttl).toBe(
      Date.parse('2026-01-31T00:00:01.000Z') / 1000,
    );
  });

  it('never writes a token attribute, only the token hash', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(SESSION);
    const item = ddb.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    expect(item).not.toHaveProperty('token');
    expect(item.tokenHash).toBe(SESSION.tokenHash);
  });

  it('keeps "__proto__" and "constructor" metadata keys in the stored JSON', async () => {
    ddb.on(PutCommand).resolves({});
    const metadata = JSON.parse('{"__proto__":{"a":1},"constructor":{"b":2}}') as Record<string, unknown>;
    await repository.create({ ...SESSION, metadata });
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item?.metadata).toBe(
      '{"__proto__":{"a":1},"constructor":{"b":2}}',
    );
  });

  it.each(['throttled', 'internal', 'http503', 'connectionRefused', 'timeout'] as const)(
    'turns %s into StorageUnavailableError',
    async (kind) => {
      const original = dynamoErrors[kind]();
      ddb.on(PutCommand).rejects(original);
      const error = await repository.create(SESSION).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect((error as Error).cause).toBe(original);
    },
  );

  it('rethrows a validation error as it is', async () => {
    const original = dynamoErrors.validation();
    ddb.on(PutCommand).rejects(original);
    await expect(repository.create(SESSION)).rejects.toBe(original);
  });
});

describe('DynamoSessionRepository.create: browser binding', () => {
  it('writes no binding attribute for a session that does not bind, so its item is as before', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(SESSION);
    const item = ddb.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    for (const name of ['bindToBrowser', 'bindingHash', 'boundAt']) expect(item).not.toHaveProperty(name);
  });

  it('writes bindToBrowser true for a session that binds, and no binding yet', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create({ ...SESSION, bindToBrowser: true });
    const item = ddb.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    expect(item.bindToBrowser).toBe(true);
    expect(item).not.toHaveProperty('bindingHash');
    expect(item).not.toHaveProperty('boundAt');
  });
});

describe('DynamoSessionRepository.create when the put meets an existing session', () => {
  /** The refusal DynamoDB sends for ALL_OLD: the item as it is, in DynamoDB's attribute-value form. */
  const refusedOver = (tokenHash: string) =>
    Object.assign(dynamoErrors.conditionFailed(), {
      Item: { id: { S: SESSION.id }, tokenHash: { S: tokenHash } },
    });

  it('asks DynamoDB for the existing item when the condition fails', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(SESSION);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.ReturnValuesOnConditionCheckFailure).toBe(
      'ALL_OLD',
    );
  });

  it('answers the session as stored when the existing item is this very session (an earlier write of its own)', async () => {
    ddb.on(PutCommand).rejects(refusedOver(SESSION.tokenHash));
    const earlier = { ...STORED_ITEM, createdAt: '2025-12-31T23:59:58.000Z' };
    ddb.on(GetCommand).resolves({ Item: earlier });
    await expect(repository.create(SESSION)).resolves.toEqual({
      ...SESSION,
      createdAt: '2025-12-31T23:59:58.000Z',
    });
  });

  it('refuses with the original error, without another read, when the existing item is another session', async () => {
    const refusal = refusedOver('b'.repeat(64));
    ddb.on(PutCommand).rejects(refusal);
    await expect(repository.create(SESSION)).rejects.toBe(refusal);
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  describe('on an engine that does not return the existing item (dynalite)', () => {
    it('reads the session by id, strongly consistent, and succeeds when it is this very session', async () => {
      ddb.on(PutCommand).rejects(dynamoErrors.conditionFailed());
      ddb.on(GetCommand).resolves({ Item: STORED_ITEM });
      await expect(repository.create(SESSION)).resolves.toEqual(SESSION);
      expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
        TableName: 'sessions-t',
        Key: { id: SESSION.id },
        ConsistentRead: true,
      });
    });

    it.each([
      ['another session', { Item: { id: SESSION.id, tokenHash: 'b'.repeat(64) } }],
      ['no session any more', {}],
    ])('refuses with the original error when it finds %s', async (_name, answer) => {
      const refusal = dynamoErrors.conditionFailed();
      ddb.on(PutCommand).rejects(refusal);
      ddb.on(GetCommand).resolves(answer);
      await expect(repository.create(SESSION)).rejects.toBe(refusal);
    });

    it('turns a failing read into StorageUnavailableError', async () => {
      ddb.on(PutCommand).rejects(dynamoErrors.conditionFailed());
      ddb.on(GetCommand).rejects(dynamoErrors.internal());
      await expect(repository.create(SESSION)).rejects.toBeInstanceOf(StorageUnavailableError);
    });
  });
});

describe('DynamoSessionRepository.lookupToken', () => {
  it('queries the token-hash index for one item, asking only for what locates it and its cut-offs', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await repository.lookupToken('b'.repeat(64));
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toEqual({
      TableName: 'sessions-t',
      IndexName: SESSION_TOKEN_INDEX,
      KeyConditionExpression: 'tokenHash = :h',
      ExpressionAttributeValues: { ':h': 'b'.repeat(64) },
      ProjectionExpression: 'id, boardId, orgId, userId, createdByUserId, createdByKeyId, readsCutoffCopy',
      Limit: 1,
    });
  });

  it('returns where the session is', async () => {
    ddb.on(QueryCommand).resolves({
      Items: [
        {
          id: SESSION.id,
          boardId: SESSION.boardId,
          orgId: SESSION.orgId,
          userId: SESSION.userId,
          createdByUserId: SESSION.createdByUserId,
          createdByKeyId: SESSION.createdByKeyId,
        },
      ],
    });
    await expect(repository.lookupToken(SESSION.tokenHash)).resolves.toEqual({
      id: SESSION.id,
      boardId: SESSION.boardId,
      orgId: SESSION.orgId,
      userId: SESSION.userId,
      createdByUserId: SESSION.createdByUserId,
      createdByKeyId: SESSION.createdByKeyId,
    });
  });

  it('returns undefined when no session has the hash', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await expect(repository.lookupToken('c'.repeat(64))).resolves.toBeUndefined();
  });
});

describe('DynamoSessionRepository.get', () => {
  it('reads the session by id strongly consistently, so a revocation shows at once', async () => {
    ddb.on(GetCommand).resolves({});
    await repository.get(SESSION.id);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'sessions-t',
      Key: { id: SESSION.id },
      ConsistentRead: true,
    });
  });

  it('returns the session without the TTL or index keys, its metadata parsed back', async () => {
    ddb.on(GetCommand).resolves({ Item: STORED_ITEM });
    await expect(repository.get(SESSION.id)).resolves.toEqual(SESSION);
  });

  it('returns "__proto__" metadata keys as own data, not as a prototype', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...STORED_ITEM, metadata: '{"__proto__":{"polluted":true}}' } });
    const found = await repository.get(SESSION.id);
    expect(Object.hasOwn(found?.metadata ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(found?.metadata)).toBe(Object.prototype);
  });

  it('reads a session that binds, bound or not, with its binding', async () => {
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: { ...STORED_ITEM, bindToBrowser: true } })
      .resolvesOnce({ Item: { ...STORED_ITEM, bindToBrowser: true, ...BINDING } });
    await expect(repository.get(SESSION.id)).resolves.toEqual({ ...SESSION, bindToBrowser: true });
    await expect(repository.get(SESSION.id)).resolves.toEqual({
      ...SESSION,
      bindToBrowser: true,
      ...BINDING,
    });
  });

  it('reads anything but a boolean true as a session that does not bind', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...STORED_ITEM, bindToBrowser: 'true' } });
    expect((await repository.get(SESSION.id))?.bindToBrowser).toBe(false);
  });

  it('stores the tenant with its kind, and reads it back as stored', async () => {
    ddb.on(PutCommand).resolves({});
    const outsiders = { ...SESSION, tenant: { kind: 'keyOwner', id: 'org-a' } } as const;
    await repository.create(outsiders);
    const item = ddb.commandCalls(PutCommand)[0]?.args[0].input.Item;
    expect(item?.tenant).toEqual({ kind: 'keyOwner', id: 'org-a' });
    ddb.on(GetCommand).resolves({ Item: item });
    expect((await repository.get(SESSION.id))?.tenant).toEqual({ kind: 'keyOwner', id: 'org-a' });
  });

  it('reads a session stored before tenants were recorded as its board organization’s, as its subject was', async () => {
    const { tenant: _t, ...legacy } = STORED_ITEM;
    ddb.on(GetCommand).resolves({ Item: { ...legacy, orgId: 'org-legacy' } });
    expect((await repository.get(SESSION.id))?.tenant).toEqual({ kind: 'organization', id: 'org-legacy' });
  });

  it('reads a malformed tenant as the legacy one, never as another kind', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...STORED_ITEM, tenant: { kind: 'admin', id: 'x' } } });
    expect((await repository.get(SESSION.id))?.tenant).toEqual({ kind: 'organization', id: SESSION.orgId });
  });

  it('reads a session stored before ownership was recorded with no organization and no creator', async () => {
    const { orgId: _o, createdByUserId: _u, createdByKeyId: _k, ...legacy } = STORED_ITEM;
    ddb.on(GetCommand).resolves({ Item: legacy });
    await expect(repository.get(SESSION.id)).resolves.toMatchObject({
      orgId: '',
      createdByUserId: '',
      createdByKeyId: '',
    });
  });
});

describe('DynamoSessionRepository.getMany', () => {
  it('reads up to 100 ids per consistent BatchGetItem', async () => {
    ddb.on(BatchGetCommand).resolves({ Responses: { 'sessions-t': [] } });
    const ids = Array.from({ length: 150 }, (_, i) => `id-${i}`);
    await repository.getMany(ids);
    const calls = ddb
      .commandCalls(BatchGetCommand)
      .map((call) => call.args[0].input.RequestItems?.['sessions-t']);
    expect(calls.map((request) => request?.Keys?.length)).toEqual([100, 50]);
    expect(calls.every((request) => request?.ConsistentRead === true)).toBe(true);
  });

  it('asks again for keys DynamoDB left unprocessed', async () => {
    ddb
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { 'sessions-t': [] },
        UnprocessedKeys: { 'sessions-t': { Keys: [{ id: SESSION.id }] } },
      })
      .resolvesOnce({ Responses: { 'sessions-t': [STORED_ITEM] } });
    await expect(repository.getMany([SESSION.id])).resolves.toEqual([SESSION]);
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(2);
  });

  it('fails as unavailable rather than returning less when keys stay unprocessed', async () => {
    ddb.on(BatchGetCommand).resolves({ UnprocessedKeys: { 'sessions-t': { Keys: [{ id: SESSION.id }] } } });
    await expect(repository.getMany([SESSION.id])).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('DynamoSessionRepository: write-sharded scope keys', () => {
  it('stores a session under the shard sessionShard gives it, in every scope index key', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(SESSION);
    const item = ddb.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    const shard = sessionShard(SESSION.id);
    expect(shard).toBe(SHARD);
    expect(item).toMatchObject({
      orgUserShardKey: shardedScopeKey(ORG_USER, shard),
      creatorUserShardKey: shardedScopeKey(CREATOR_USER, shard),
      boardShardKey: shardedScopeKey(SESSION.boardId, shard),
      creatorBoardShardKey: shardedScopeKey(CREATOR_BOARD, shard),
    });
  });

  it('spreads one board’s sessions over the shards, each in the partition its id says', async () => {
    ddb.on(PutCommand).resolves({});
    const ids = Array.from(
      { length: 64 },
      (_, i) => `3f2c1e0a-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    for (const id of ids) await repository.create({ ...SESSION, id });
    const keys = ddb.commandCalls(PutCommand).map((call) => call.args[0].input.Item?.boardShardKey);
    expect(keys).toEqual(ids.map((id) => `board-1#${sessionShard(id)}`));
    expect(new Set(keys).size).toBeGreaterThan(8);
  });
});

describe('DynamoSessionRepository.queryScope', () => {
  it('reads every write shard newest first below the cursor, and merges them into one page', async () => {
    ddb.on(WireQueryCommand).resolves({ Items: [] });
    ddb
      .on(WireQueryCommand, {
        ExpressionAttributeValues: { ':pk': { S: 'board-1#3' }, ':below': { S: 'k9' } },
      })
      .resolves({ Items: [{ id: { S: 'a' }, createdKey: { S: 'k5' } }] });
    ddb
      .on(WireQueryCommand, {
        ExpressionAttributeValues: { ':pk': { S: 'board-1#7' }, ':below': { S: 'k9' } },
      })
      .resolves({
        Items: [{ id: { S: 'b' }, createdKey: { S: 'k7' } }],
        LastEvaluatedKey: { id: { S: 'b' }, createdKey: { S: 'k7' }, boardShardKey: { S: 'board-1#7' } },
      });
    const page = await repository.queryScope(
      { kind: 'board', boardId: 'board-1' },
      { below: 'k9', limit: 1 },
    );
    // Shard 7 may hold more below k7, but nothing above it is unread: b is the board's newest, then below k7.
    expect(page).toEqual({ refs: [{ id: 'b', position: 'k7' }], next: 'k7' });
    const inputs = ddb.commandCalls(WireQueryCommand).map((call) => call.args[0].input);
    expect(inputs).toHaveLength(SCOPE_WRITE_SHARDS);
    expect(inputs).toEqual(
      Array.from({ length: SCOPE_WRITE_SHARDS }, (_, shard) => ({
        TableName: 'sessions-t',
        IndexName: 'board-index',
        KeyConditionExpression: 'boardShardKey = :pk AND createdKey < :below',
        ExpressionAttributeValues: { ':pk': { S: `board-1#${shard}` }, ':below': { S: 'k9' } },
        ScanIndexForward: false,
        Limit: 1,
      })),
    );
  });

  it("narrows a user's scope to a board with a filter on the index's boardId", async () => {
    ddb.on(WireQueryCommand).resolves({ Items: [] });
    const page = await repository.queryScope(
      { kind: 'orgUser', orgId: SESSION.orgId, userId: SESSION.userId, boardId: 'board-1' },
      { limit: 5 },
    );
    expect(page).toEqual({ refs: [], next: undefined });
    expect(ddb.commandCalls(WireQueryCommand)[0]?.args[0].input).toMatchObject({
      IndexName: 'orgUser-index',
      KeyConditionExpression: 'orgUserShardKey = :pk',
      FilterExpression: 'boardId = :board',
      ExpressionAttributeValues: { ':pk': { S: `${ORG_USER}#0` }, ':board': { S: 'board-1' } },
    });
  });

  it.each([
    [
      { kind: 'creatorUser', creatorUserId: SESSION.createdByUserId, userId: SESSION.userId },
      'creatorUser-index',
      STORED_ITEM.creatorUserShardKey,
    ],
    [
      { kind: 'creatorBoard', creatorUserId: SESSION.createdByUserId, boardId: SESSION.boardId },
      'creatorBoard-index',
      STORED_ITEM.creatorBoardShardKey,
    ],
  ] as const)(
    'finds a creator scope under the key the session was stored with (%j)',
    async (scope, index, key) => {
      ddb.on(WireQueryCommand).resolves({ Items: [] });
      await repository.queryScope(scope, { limit: 1 });
      const inputs = ddb.commandCalls(WireQueryCommand).map((call) => call.args[0].input);
      expect(inputs.find((input) => input.ExpressionAttributeValues?.[':pk']?.S === key)).toMatchObject({
        IndexName: index,
      });
    },
  );

  it("reads a creator's id from the index entries, which the tenant filter needs", async () => {
    ddb.on(WireQueryCommand).resolves({ Items: [] });
    ddb
      .on(WireQueryCommand, { ExpressionAttributeValues: { ':pk': { S: `${ORG_USER}#4` } } })
      .resolves({ Items: [{ id: { S: 'c' }, createdKey: { S: 'k3' }, createdByUserId: { S: 'member-2' } }] });
    const page = await repository.queryScope(
      { kind: 'orgUser', orgId: SESSION.orgId, userId: SESSION.userId },
      { limit: 2 },
    );
    expect(page).toEqual({
      refs: [{ id: 'c', position: 'k3', createdByUserId: 'member-2' }],
      next: undefined,
    });
  });
});

describe('DynamoSessionRepository.scopeCandidates (revoke-all’s count)', () => {
  const AT = '2026-01-05T00:00:00.000Z';

  it('queries every write shard at once, for the active sessions up to the cut-off and only what the scope does not fix', async () => {
    let inFlight = 0;
    let most = 0;
    ddb.on(WireQueryCommand).callsFake(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight -= 1;
      return { Items: [] };
    });
    await repository.scopeCandidates({ kind: 'board', boardId: 'board-1' }, AT);
    // Every shard's first page was in flight at the same time: the count waits for one round trip per page.
    expect(most).toBe(SCOPE_WRITE_SHARDS);
    const inputs = ddb.commandCalls(WireQueryCommand).map((call) => call.args[0].input);
    expect(inputs).toEqual(
      Array.from({ length: SCOPE_WRITE_SHARDS }, (_, shard) => ({
        TableName: 'sessions-t',
        IndexName: 'board-index',
        KeyConditionExpression: 'boardShardKey = :pk AND createdKey < :below',
        FilterExpression: 'expiresAt > :at AND attribute_not_exists(revokedAt)',
        // DynamoDB's own form: the count reads its answers without the document client's copy.
        ExpressionAttributeValues: {
          ':pk': { S: `board-1#${shard}` },
          ':below': { S: `${AT}$` },
          ':at': { S: AT },
        },
        // `expiresAt`: how long the cut-off's record must live.
        ProjectionExpression: 'createdKey, orgId, userId, createdByUserId, expiresAt',
        Limit: STATE_PAGE_SIZE,
      })),
    );
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(0);
  });

  it('follows each shard page by page, and fills in what the scope fixes', async () => {
    ddb.on(WireQueryCommand).resolves({ Items: [] });
    ddb
      .on(WireQueryCommand, { ExpressionAttributeValues: { ':pk': { S: `${ORG_USER}#2` } } })
      .resolvesOnce({
        Items: [
          {
            createdKey: { S: '2026-01-01T00:00:00.000Z#a' },
            createdByUserId: { S: 'owner-1' },
            expiresAt: { S: '2026-02-01T00:00:00.000Z' },
          },
        ],
        LastEvaluatedKey: { id: { S: 'a' } },
      })
      .resolvesOnce({
        Items: [
          {
            createdKey: { S: '2026-01-02T00:00:00.000Z#b' },
            createdByUserId: { S: 'colleague' },
            expiresAt: { S: '2026-02-02T00:00:00.000Z' },
          },
        ],
      });
    ddb.on(WireQueryCommand, { ExpressionAttributeValues: { ':pk': { S: `${ORG_USER}#9` } } }).resolves({
      Items: [
        {
          createdKey: { S: `${AT}#c` },
          createdByUserId: { S: 'owner-1' },
          expiresAt: { S: '2026-02-03T00:00:00.000Z' },
        },
      ],
    });
    const candidates = await repository.scopeCandidates(
      { kind: 'orgUser', orgId: SESSION.orgId, userId: SESSION.userId, boardId: 'board-1' },
      AT,
    );
    expect(candidates).toEqual([
      {
        id: 'a',
        createdAt: '2026-01-01T00:00:00.000Z',
        orgId: SESSION.orgId,
        userId: SESSION.userId,
        boardId: 'board-1',
        createdByUserId: 'owner-1',
        expiresAt: '2026-02-01T00:00:00.000Z',
      },
      {
        id: 'b',
        createdAt: '2026-01-02T00:00:00.000Z',
        orgId: SESSION.orgId,
        userId: SESSION.userId,
        boardId: 'board-1',
        createdByUserId: 'colleague',
        expiresAt: '2026-02-02T00:00:00.000Z',
      },
      {
        id: 'c',
        createdAt: AT,
        orgId: SESSION.orgId,
        userId: SESSION.userId,
        boardId: 'board-1',
        createdByUserId: 'owner-1',
        expiresAt: '2026-02-03T00:00:00.000Z',
      },
    ]);
    const second = ddb
      .commandCalls(WireQueryCommand)
      .map((call) => call.args[0].input)
      .find((input) => input.ExclusiveStartKey !== undefined);
    expect(second).toMatchObject({
      ExclusiveStartKey: { id: { S: 'a' } },
      FilterExpression: 'expiresAt > :at AND attribute_not_exists(revokedAt) AND boardId = :board',
      ExpressionAttributeValues: { ':pk': { S: `${ORG_USER}#2` }, ':board': { S: 'board-1' } },
      ProjectionExpression: 'createdKey, createdByUserId, expiresAt',
    });
    expect(ddb.commandCalls(WireQueryCommand)).toHaveLength(SCOPE_WRITE_SHARDS + 1);
  });

  it('leaves out, at the index, the sessions of the organizations counted through their own scopes', async () => {
    ddb.on(WireQueryCommand).resolves({ Items: [] });
    const scope = { kind: 'creatorUser', creatorUserId: 'owner-1', userId: SESSION.userId } as const;
    await repository.scopeCandidates(scope, AT, { exceptOrgs: ['org-a', 'org-b'] });
    expect(ddb.commandCalls(WireQueryCommand)[0]?.args[0].input).toMatchObject({
      FilterExpression: 'expiresAt > :at AND attribute_not_exists(revokedAt) AND NOT orgId IN (:o0, :o1)',
      ExpressionAttributeValues: { ':o0': { S: 'org-a' }, ':o1': { S: 'org-b' } },
      ProjectionExpression: 'createdKey, orgId, boardId, expiresAt',
    });
  });
});

describe('DynamoSessionRepository.bind', () => {
  it('sets only the binding hash and time, in one update conditional on a bindable, unbound, unrevoked session', async () => {
    ddb.on(UpdateCommand).resolves({});
    await expect(repository.bind(SESSION.id, BINDING)).resolves.toBe(true);
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'sessions-t',
      Key: { id: SESSION.id },
      UpdateExpression: 'SET bindingHash = :hash, boundAt = :at',
      ConditionExpression:
        'attribute_exists(id) AND attribute_not_exists(revokedAt) AND bindToBrowser = :yes AND attribute_not_exists(bindingHash)',
      ExpressionAttributeValues: { ':hash': BINDING.bindingHash, ':at': BINDING.boundAt, ':yes': true },
    });
  });

  it('answers false, without reading, when the condition fails (bound before, revoked, or gone)', async () => {
    ddb.on(UpdateCommand).rejects(dynamoErrors.conditionFailed());
    await expect(repository.bind(SESSION.id, BINDING)).resolves.toBe(false);
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('turns throttling of a binding into StorageUnavailableError', async () => {
    ddb.on(UpdateCommand).rejects(dynamoErrors.throttled());
    await expect(repository.bind(SESSION.id, BINDING)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('DynamoSessionRepository.revoke', () => {
  it('records the first revocation with one conditional update that never creates an item', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { ...STORED_ITEM, revokedAt: REVOCATION.revokedAt } });
    await repository.revoke(SESSION.id, REVOCATION);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'sessions-t',
      Key: { id: SESSION.id },
      UpdateExpression: 'SET revokedAt = :at, revokedByUserId = :by, revokedByKeyId = :key',
      ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(revokedAt)',
      ExpressionAttributeValues: { ':at': REVOCATION.revokedAt, ':by': 'owner-1', ':key': 'key_1' },
      ReturnValues: 'ALL_NEW',
    });
  });

  it('returns the session as it is when it was revoked before: the first revocation stays', async () => {
    const earlier = {
      ...STORED_ITEM,
      revokedAt: '2026-01-01T12:00:00.000Z',
      revokedByUserId: 'x',
      revokedByKeyId: 'y',
    };
    ddb.on(UpdateCommand).rejects(dynamoErrors.conditionFailed());
    ddb.on(GetCommand).resolves({ Item: earlier });
    await expect(repository.revoke(SESSION.id, REVOCATION)).resolves.toMatchObject({
      revokedAt: '2026-01-01T12:00:00.000Z',
    });
  });

  it('returns undefined when there is no such session', async () => {
    ddb.on(UpdateCommand).rejects(dynamoErrors.conditionFailed());
    ddb.on(GetCommand).resolves({});
    await expect(repository.revoke(SESSION.id, REVOCATION)).resolves.toBeUndefined();
  });

  it('turns throttling of a revocation into StorageUnavailableError', async () => {
    ddb.on(UpdateCommand).rejects(dynamoErrors.throttled());
    await expect(repository.revoke(SESSION.id, REVOCATION)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('cut-off records in the sessions table: DynamoCutoffRecords writes them, DynamoSessionRepository reads them', () => {
  const ENTRY = { id: 'cut-1', at: '2026-01-03T00:00:00.000Z', byUserId: 'owner-1', byKeyId: 'key_1' };
  const NOW = ENTRY.at;
  const copyId = (key: unknown[], copy: number) =>
    `cutoff#${sha256(JSON.stringify(key))}${copy === 0 ? '' : `#${copy}`}`;
  const CREATOR: CutoffScope = { kind: 'creatorUser', creatorUserId: 'owner-1', userId: 'u' };
  const CREATOR_KEY = ['creatorUser', 'owner-1', 'u'];
  const COPIES = Array.from({ length: CUTOFF_COPIES }, (_, copy) => copy);
  /** Copy `copy` of a record as stored: copies but the first carry their number. */
  const record = (key: unknown[], fields: Record<string, unknown>, copy = 0) => ({
    id: copyId(key, copy),
    cutoffScope: JSON.stringify(key),
    ...(copy > 0 ? { cutoffCopy: copy } : {}),
    ...fields,
  });
  /** Answers each BatchGetItem with the stored items it asks for (`stored(id)`, undefined: none). */
  const answerReads = (stored: (id: string, read: number) => Record<string, unknown> | undefined) => {
    const reads = new Map<string, number>();
    ddb.on(BatchGetCommand).callsFake((input) => {
      const keys = (input.RequestItems['sessions-t']?.Keys ?? []) as Array<{ id: string }>;
      return {
        Responses: {
          'sessions-t': keys.flatMap(({ id }) => {
            const read = reads.get(id) ?? 0;
            reads.set(id, read + 1);
            const item = stored(id, read);
            return item ? [item] : [];
          }),
        },
      };
    });
  };
  const updates = () => ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
  const updatedIds = () => updates().map((input) => String(input.Key?.id));

  it('picks the copy an embed load reads by a hash of the session id: always the same, spread evenly', () => {
    expect(cutoffCopyOf(SESSION.id)).toBe(cutoffCopyOf(SESSION.id));
    const loads = new Array<number>(CUTOFF_COPIES).fill(0);
    for (let i = 0; i < 8_000; i++) {
      const copy = cutoffCopyOf(`3f2c1e0a-0000-4000-8000-${String(i).padStart(12, '0')}`);
      expect(Number.isInteger(copy) && copy >= 0 && copy < CUTOFF_COPIES).toBe(true);
      loads[copy] = (loads[copy] ?? 0) + 1;
    }
    // 1,000 a copy on average: no copy takes more than an eighth and a little of the loads.
    for (const count of loads) expect(count).toBeGreaterThan(900);
    for (const count of loads) expect(count).toBeLessThan(1_100);
  });

  it('gives each copy its own id, copy 0 the id a record had before copies existed', () => {
    expect(COPIES.map((copy) => cutoffId(CREATOR, copy))).toEqual(
      COPIES.map((copy) => copyId(CREATOR_KEY, copy)),
    );
    expect(new Set(COPIES.map((copy) => cutoffId(CREATOR, copy))).size).toBe(CUTOFF_COPIES);
    expect(cutoffId(CREATOR)).toBe(`cutoff#${sha256(JSON.stringify(CREATOR_KEY))}`);
  });

  it('writes every copy of each scope’s record with one update conditional on the revision it read, the entry named after its id', async () => {
    answerReads(() => undefined);
    ddb.on(UpdateCommand).resolves({});
    await cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW });
    // Copy 0 alone read for copy 0; copy 0 with each other copy, which starts from it when it is new.
    const reads = ddb
      .commandCalls(BatchGetCommand)
      .map((call) => call.args[0].input.RequestItems?.['sessions-t']);
    expect(reads.every((read) => read?.ConsistentRead === true)).toBe(true);
    expect(reads.map((read) => read?.Keys).sort((a, b) => (a?.length ?? 0) - (b?.length ?? 0))[0]).toEqual([
      { id: copyId(CREATOR_KEY, 0) },
    ]);
    expect(updatedIds().sort()).toEqual(COPIES.map((copy) => copyId(CREATOR_KEY, copy)).sort());
    // Marked as written into every copy by its writer: a new copy never takes it from copy 0.
    const entry = { at: ENTRY.at, byUserId: 'owner-1', byKeyId: 'key_1', everyCopy: true };
    for (const copy of COPIES) {
      const input = updates().find((update) => update.Key?.id === copyId(CREATOR_KEY, copy));
      expect(input).toEqual({
        TableName: 'sessions-t',
        Key: { id: copyId(CREATOR_KEY, copy) },
        // Uncounted: the record has no TTL until a count tells how long its sessions live.
        UpdateExpression:
          copy === 0
            ? 'SET cutoffScope = :scope, #rev = :next, #s0 = :s0 REMOVE #ttl'
            : 'SET cutoffScope = :scope, #rev = :next, #copy = :copy, #s0 = :s0 REMOVE #ttl',
        ConditionExpression: 'attribute_not_exists(id)',
        ExpressionAttributeNames: {
          '#rev': 'cutoffRevision',
          '#ttl': 'ttl',
          '#s0': 'entry:cut-1',
          ...(copy === 0 ? {} : { '#copy': 'cutoffCopy' }),
        },
        ExpressionAttributeValues: {
          ':scope': JSON.stringify(CREATOR_KEY),
          ':next': 1,
          ':s0': entry,
          ...(copy === 0 ? {} : { ':copy': copy }),
        },
      });
    }
  });

  it('answers only once every copy is written: not while one copy’s write is still in flight', async () => {
    answerReads(() => undefined);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    ddb.on(UpdateCommand).callsFake(async (input) => {
      if (input.Key.id === copyId(CREATOR_KEY, 5)) await held;
      return {};
    });
    let answered = false;
    const writing = cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW }).then(() => {
      answered = true;
    });
    await vi.waitFor(() => expect(updates()).toHaveLength(CUTOFF_COPIES));
    // Seven copies written, the sixth's answer held back: the call has not answered.
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    release();
    await writing;
    expect(answered).toBe(true);
  });

  it('fails as it does today when one copy’s write fails, after the others settled; its retry writes only what is missing', async () => {
    const written = new Map<string, Record<string, unknown>>();
    answerReads((id) => written.get(id));
    let failing = true;
    let inFlight = 0;
    ddb.on(UpdateCommand).callsFake(async (input) => {
      // Copy 3 fails at once; the others answer a few turns later.
      if (failing && input.Key.id === copyId(CREATOR_KEY, 3)) throw dynamoErrors.throttled();
      inFlight += 1;
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      const copy = COPIES.find((n) => copyId(CREATOR_KEY, n) === input.Key.id) ?? 0;
      written.set(
        input.Key.id,
        record(
          CREATOR_KEY,
          { cutoffRevision: 1, 'entry:cut-1': input.ExpressionAttributeValues[':s0'] },
          copy,
        ),
      );
      return {};
    });
    await expect(cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW })).rejects.toBeInstanceOf(
      StorageUnavailableError,
    );
    // Nothing of the call is still on its way when it answers.
    expect(inFlight).toBe(0);
    expect([...written.keys()]).not.toContain(copyId(CREATOR_KEY, 3));
    expect(written.size).toBe(CUTOFF_COPIES - 1);
    failing = false;
    ddb.resetHistory();
    await cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW });
    // The same entry again: the copies that hold it are left as they are; the missing one is written.
    expect(updatedIds()).toEqual([copyId(CREATOR_KEY, 3)]);
    expect(written.size).toBe(CUTOFF_COPIES);
  });

  it('creates a copy that does not exist yet from copy 0, with copy 0’s cut-offs and the write’s', async () => {
    const theirs = { at: '2026-01-02T00:00:00.000Z', byUserId: 'other', byKeyId: null, until: 1_800_000_000 };
    answerReads((id) =>
      id === copyId(CREATOR_KEY, 0)
        ? record(CREATOR_KEY, { cutoffRevision: 7, cutoffCoversUntil: 1_800_000_000, 'entry:theirs': theirs })
        : undefined,
    );
    ddb.on(UpdateCommand).resolves({});
    await cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW });
    const copy2 = updates().find((input) => input.Key?.id === copyId(CREATOR_KEY, 2));
    expect(copy2?.ConditionExpression).toBe('attribute_not_exists(id)');
    expect(copy2?.ExpressionAttributeValues).toMatchObject({ ':next': 1, ':copy': 2, ':cu': 1_800_000_000 });
    expect(Object.values(copy2?.ExpressionAttributeNames ?? {})).toEqual(
      expect.arrayContaining(['entry:theirs', 'entry:cut-1']),
    );
    // Copy 0 itself is updated on the revision it read.
    const copy0 = updates().find((input) => input.Key?.id === copyId(CREATOR_KEY, 0));
    expect(copy0).toMatchObject({
      ConditionExpression: '#rev = :rev',
      ExpressionAttributeValues: { ':rev': 7 },
    });
  });

  it('leaves out of a new copy what copy 0 holds from writers that write every copy: an undone cut-off is not copied back', async () => {
    const legacy = { at: '2026-01-01T00:00:00.000Z', byUserId: 'old', byKeyId: null, until: 1_800_000_000 };
    // Another call's first write, undone on copy 0 after this write read it (its own copy 5 never written).
    const undone = { at: '2026-01-02T00:00:00.000Z', byUserId: 'other', byKeyId: 'key_2', everyCopy: true };
    answerReads((id) =>
      id === copyId(CREATOR_KEY, 0)
        ? record(CREATOR_KEY, { cutoffRevision: 3, 'entry:legacy': legacy, 'entry:undone': undone })
        : undefined,
    );
    ddb.on(UpdateCommand).resolves({});
    await cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW });
    const copy5 = updates().find((input) => input.Key?.id === copyId(CREATOR_KEY, 5));
    expect(
      Object.values(copy5?.ExpressionAttributeNames ?? {})
        .filter((name) => name.startsWith('entry:'))
        .sort(),
    ).toEqual(['entry:cut-1', 'entry:legacy']);
  });

  it('makes no copy of a copy 0 that holds only what writers of every copy wrote (compact-cutoffs)', async () => {
    const theirs = { at: '2026-01-02T00:00:00.000Z', byUserId: 'other', byKeyId: 'key_2', everyCopy: true };
    const stored = record(['board', 'b-new'], { cutoffRevision: 1, 'entry:theirs': theirs });
    ddb.on(ScanCommand).resolves({ Items: [{ id: stored.id, cutoffScope: stored.cutoffScope }] });
    answerReads((id) => (id === stored.id ? stored : undefined));
    await expect(cutoffRecords.copyCutoffs(NOW)).resolves.toEqual({
      records: 1,
      copiesWritten: 0,
      unfinished: 0,
    });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('copies into every missing copy what copy 0 holds from before copies existed (compact-cutoffs)', async () => {
    const old = { at: '2026-01-02T00:00:00.000Z', byUserId: 'other', byKeyId: 'key_2', until: 1_800_000_000 };
    const stored = record(['board', 'b-old'], { cutoffRevision: 4, ttl: 1_800_000_000, 'entry:old': old });
    ddb.on(ScanCommand).resolves({ Items: [{ id: stored.id, cutoffScope: stored.cutoffScope }] });
    answerReads((id) => (id === stored.id ? stored : undefined));
    ddb.on(UpdateCommand).resolves({});
    await expect(cutoffRecords.copyCutoffs(NOW)).resolves.toEqual({
      records: 1,
      copiesWritten: CUTOFF_COPIES - 1,
      unfinished: 0,
    });
    for (const input of updates()) {
      expect(input.ConditionExpression).toBe('attribute_not_exists(id)');
      expect(input.ExpressionAttributeValues).toMatchObject({ ':ttl': 1_800_000_000 });
      expect(Object.values(input.ExpressionAttributeNames ?? {})).toContain('entry:old');
    }
  });

  it('completes every existing copy with what a version without copies wrote to copy 0 since it was made (npm run deploy, compact-cutoffs)', async () => {
    // A revoke-all of this version made the copies; then one of the version before, still running during
    // the deploy, wrote copy 0 alone. Copy 3 got it some other way already.
    const ours = { at: '2026-01-02T00:00:00.000Z', byUserId: 'new', byKeyId: 'key_2', everyCopy: true };
    const theirs = { at: '2026-01-03T00:00:00.000Z', byUserId: 'old', byKeyId: 'key_3' };
    const key = ['board', 'b-deploy'];
    const stored = new Map<string, Record<string, unknown>>(
      COPIES.map((copy) => [
        copyId(key, copy),
        record(
          key,
          {
            cutoffRevision: 2,
            'entry:ours': ours,
            ...(copy === 0 || copy === 3 ? { 'entry:theirs': theirs } : {}),
          },
          copy,
        ),
      ]),
    );
    ddb.on(ScanCommand).resolves({ Items: [{ id: copyId(key, 0), cutoffScope: JSON.stringify(key) }] });
    answerReads((id) => stored.get(id));
    ddb.on(UpdateCommand).callsFake((input) => {
      const item = stored.get(input.Key.id) ?? {};
      stored.set(input.Key.id, {
        ...item,
        cutoffRevision: input.ExpressionAttributeValues[':next'],
        'entry:theirs': input.ExpressionAttributeValues[':s0'],
      });
      return {};
    });
    await expect(cutoffRecords.copyCutoffs(NOW)).resolves.toEqual({
      records: 1,
      copiesWritten: CUTOFF_COPIES - 2,
      unfinished: 0,
    });
    expect(updatedIds().sort()).toEqual(
      COPIES.filter((copy) => copy !== 0 && copy !== 3)
        .map((copy) => copyId(key, copy))
        .sort(),
    );
    for (const input of updates()) {
      // Merged into the copy as it was read, as the revoke-all's own write would have been.
      expect(input).toMatchObject({
        ConditionExpression: '#rev = :rev',
        ExpressionAttributeValues: { ':rev': 2, ':next': 3, ':s0': { at: theirs.at, byUserId: 'old' } },
      });
      expect(input.ExpressionAttributeNames).toMatchObject({ '#s0': 'entry:theirs' });
    }
    // Run again: every copy holds it.
    ddb.resetHistory();
    await expect(cutoffRecords.copyCutoffs(NOW)).resolves.toMatchObject({ copiesWritten: 0 });
    expect(updates()).toHaveLength(0);
  });

  it('reads again and merges anew when another write reached a copy first, and sets its TTL once counted', async () => {
    const theirs = { at: '2026-01-02T00:00:00.000Z', byUserId: 'other', byKeyId: null, until: 1_800_000_000 };
    answerReads((id, read) => {
      const copy = COPIES.find((n) => copyId(CREATOR_KEY, n) === id) ?? 0;
      // Each copy: none at first read, then another write's.
      return read === 0
        ? undefined
        : record(
            CREATOR_KEY,
            { cutoffRevision: 4, cutoffCoversUntil: 1_800_000_000, 'entry:theirs': theirs },
            copy,
          );
    });
    const tried = new Set<string>();
    ddb.on(UpdateCommand).callsFake(async (input) => {
      if (tried.has(input.Key.id)) return {};
      tried.add(input.Key.id);
      throw dynamoErrors.conditionFailed();
    });
    await cutoffRecords.writeCutoff([CREATOR], {
      entry: { ...ENTRY, until: 1_900_000_000 },
      countedThrough: '2026-01-02T12:00:00.000Z',
      now: NOW,
    });
    const second = updates().filter((input) => input.Key?.id === copyId(CREATOR_KEY, 0))[1];
    expect(second).toMatchObject({
      UpdateExpression: 'SET cutoffScope = :scope, #rev = :next, #s0 = :s0, #cu = :cu, #ttl = :ttl',
      ConditionExpression: '#rev = :rev',
      ExpressionAttributeValues: { ':rev': 4, ':next': 5, ':cu': 1_900_000_000, ':ttl': 1_900_000_000 },
    });
    expect(updates()).toHaveLength(2 * CUTOFF_COPIES);
  });

  it('gives up with a retryable CutoffContentionError when other writes keep reaching a copy first', async () => {
    ddb.on(BatchGetCommand).resolves({ Responses: { 'sessions-t': [] } });
    ddb.on(UpdateCommand).rejects(dynamoErrors.conditionFailed());
    await expect(cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW })).rejects.toBeInstanceOf(
      CutoffContentionError,
    );
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(CUTOFF_WRITE_TRIES * CUTOFF_COPIES);
  });

  it('writes nothing when every copy holds the entry already (the same write retried)', async () => {
    answerReads((id) => {
      const copy = COPIES.find((n) => copyId(CREATOR_KEY, n) === id);
      return copy === undefined
        ? undefined
        : record(
            CREATOR_KEY,
            { cutoffRevision: 1, 'entry:cut-1': { at: ENTRY.at, byUserId: 'owner-1', byKeyId: 'key_1' } },
            copy,
          );
    });
    await cutoffRecords.writeCutoff([CREATOR], { entry: ENTRY, now: NOW });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('raises the expiry of every copy, so none expires before the sessions it covers', async () => {
    const entry = { at: ENTRY.at, byUserId: 'owner-1', byKeyId: 'key_1', until: 1_800_000_000 };
    // The table as the writes leave it: a copy once raised reads raised (the raise reads every copy
    // again after writing, for copies made meanwhile).
    const raised = new Set<string>();
    answerReads((id) => {
      const copy = COPIES.find((n) => copyId(CREATOR_KEY, n) === id);
      if (copy === undefined) return undefined;
      const coversUntil = raised.has(id) ? 1_900_000_000 : 1_800_000_000;
      return record(
        CREATOR_KEY,
        { cutoffRevision: raised.has(id) ? 3 : 2, cutoffCoversUntil: coversUntil, 'entry:cut-1': entry },
        copy,
      );
    });
    ddb.on(UpdateCommand).callsFake((input: { Key: { id: string } }) => {
      raised.add(input.Key.id);
      return {};
    });
    await new DynamoCoveredSessions(db, 'sessions-t').extendCutoffExpiry(CREATOR, 1_900_000_000);
    expect(updatedIds().sort()).toEqual(COPIES.map((copy) => copyId(CREATOR_KEY, copy)).sort());
    for (const input of updates())
      expect(input.ExpressionAttributeValues).toMatchObject({ ':cu': 1_900_000_000 });
    // Every copy knows that expiry now: one read of all of them, nothing written.
    ddb.resetHistory();
    answerReads((id) => {
      const copy = COPIES.find((n) => copyId(CREATOR_KEY, n) === id);
      return copy === undefined
        ? undefined
        : record(
            CREATOR_KEY,
            { cutoffRevision: 3, cutoffCoversUntil: 1_900_000_000, 'entry:cut-1': entry },
            copy,
          );
    });
    await new DynamoCoveredSessions(db, 'sessions-t').extendCutoffExpiry(CREATOR, 1_900_000_000);
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(1);
    expect(updates()).toHaveLength(0);
  });

  const match = {
    id: SESSION.id,
    boardId: SESSION.boardId,
    orgId: SESSION.orgId,
    userId: SESSION.userId,
    createdByUserId: SESSION.createdByUserId,
    createdByKeyId: SESSION.createdByKeyId,
    // Stored since records had copies (session-cutoff-copy.test.ts: those stored before read copy 0).
    readsCutoffCopy: cutoffCopyOf(SESSION.id),
  };

  it('reads a session and one copy of each of its nine possible records in one consistent BatchGetItem, a legacy record’s creators honoured', async () => {
    const copy = cutoffCopyOf(SESSION.id);
    ddb.on(BatchGetCommand).resolves({
      Responses: {
        'sessions-t': [
          STORED_ITEM,
          record(
            ['board', SESSION.boardId],
            {
              'entry:late': { at: '2026-01-04T00:00:00.000Z', byUserId: 'm', byKeyId: 'k' },
              'entry:early': { at: '2026-01-02T00:00:00.000Z', byUserId: 'first', byKeyId: null },
            },
            copy,
          ),
          // A record written before records were per tenant (copy 0 alone: no longer written, never
          // copied): its creators do not include this session's.
          record(['orgUser', SESSION.orgId, SESSION.userId], {
            'entry:x': { at: '2026-01-01T12:00:00.000Z', byUserId: 'o', byKeyId: 'k', creators: ['else'] },
          }),
        ],
      },
    });
    const covered = await repository.getCovered(match);
    const request = ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.['sessions-t'];
    expect(request?.ConsistentRead).toBe(true);
    expect(request?.Keys).toHaveLength(12);
    expect(request?.Keys).toContainEqual({ id: copyId(['stage'], copy) });
    expect(request?.Keys).toContainEqual({ id: copyId(['orgUser', SESSION.orgId, SESSION.userId], 0) });
    expect(covered).toMatchObject({
      revokedAt: '2026-01-02T00:00:00.000Z',
      revokedByUserId: 'first',
      revokedByKeyId: null,
    });
  });

  it('applies to one session (the embed load by its derived id, a retrieve) the copy it recorded', async () => {
    const copy = cutoffCopyOf(SESSION.id);
    ddb.on(BatchGetCommand).resolves({
      Responses: {
        'sessions-t': [
          record(
            ['stage'],
            { 'entry:s': { at: '2026-01-04T00:00:00.000Z', byUserId: 'op', byKeyId: null } },
            copy,
          ),
        ],
      },
    });
    const [covered] = await repository.applyCutoffs([{ ...SESSION, readsCutoffCopy: copy }]);
    expect(covered).toMatchObject({ revokedAt: '2026-01-04T00:00:00.000Z', revokedByUserId: 'op' });
    const keys = ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.['sessions-t']?.Keys;
    expect(keys).toContainEqual({ id: copyId(['stage'], copy) });
    expect(keys).toHaveLength(11);
  });

  it('reads only the copy the session id picks: a load whose copy holds no cut-off is not covered by another copy’s', async () => {
    const copy = cutoffCopyOf(SESSION.id);
    const other = (copy + 1) % CUTOFF_COPIES;
    ddb.on(BatchGetCommand).resolves({
      Responses: {
        'sessions-t': [
          STORED_ITEM,
          record(
            ['stage'],
            { 'entry:s': { at: '2026-01-04T00:00:00.000Z', byUserId: 'op', byKeyId: null } },
            other,
          ),
        ],
      },
    });
    await expect(repository.getCovered(match)).resolves.toMatchObject({ revokedAt: null });
    const keys = ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.['sessions-t']?.Keys;
    expect(keys).not.toContainEqual({ id: copyId(['stage'], other) });
  });
});

describe('DynamoSessionRepository: the shard queries', () => {
  it('reads every shard of a scope in DynamoDB’s own form, for a listing and for a count', async () => {
    ddb.on(WireQueryCommand).resolves({ Items: [] });
    const repo = new DynamoSessionRepository(db, 'sessions-t');
    const scope = { kind: 'board', boardId: 'board-1' } as const;
    await repo.queryScope(scope, { limit: 1 });
    await repo.scopeCandidates(scope, '2026-01-05T00:00:00.000Z');
    expect(ddb.commandCalls(WireQueryCommand)).toHaveLength(2 * SCOPE_WRITE_SHARDS);
    // No document-client query: its marshalling would copy every entry first.
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });
});
