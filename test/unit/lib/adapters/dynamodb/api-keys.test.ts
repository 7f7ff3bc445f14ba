import {
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  type ScanCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { API_KEY_ID_INDEX } from '#lib/definitions/tables';
import type { ApiKeyRecord } from '#lib/domain/api-key';
import { StorageUnavailableError } from '#lib/domain/errors';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { mockedDocumentClient } from '#test/support/dynamo-mock';
import { apiKeyRecord } from '#test/support/fakes';

const { ddb, db } = mockedDocumentClient();
const repository = new DynamoApiKeyRepository(db, 'keys-t');
const HASH = 'f'.repeat(64);

describe('DynamoApiKeyRepository.getByHash', () => {
  it('reads the key by its hash with one strongly consistent GetItem, so a revocation applies at once', async () => {
    ddb.on(GetCommand).resolves({});
    await repository.getByHash(HASH);
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'keys-t',
      Key: { keyHash: HASH },
      ConsistentRead: true,
    });
  });

  it('returns the stored record', async () => {
    const record = apiKeyRecord(HASH, { status: 'REVOKED', revokedAt: '2026-01-02T00:00:00.000Z' });
    const { limits: _none, ...item } = record;
    ddb.on(GetCommand).resolves({ Item: item });
    await expect(repository.getByHash(HASH)).resolves.toEqual(record);
  });

  it('reads the key’s own limits from rateLimit and burstLimit', async () => {
    const { limits: _none, ...item } = apiKeyRecord(HASH);
    ddb.on(GetCommand).resolves({ Item: { ...item, rateLimit: 5, burstLimit: 20 } });
    await expect(repository.getByHash(HASH)).resolves.toEqual(
      apiKeyRecord(HASH, { limits: { rate: 5, burst: 20 } }),
    );
  });

  it.each([
    ['only a rate', { rateLimit: 5 }],
    ['only a burst', { burstLimit: 5 }],
    ['a rate of 0', { rateLimit: 0, burstLimit: 5 }],
    ['a fractional burst', { rateLimit: 5, burstLimit: 2.5 }],
    ['a rate as text', { rateLimit: '5', burstLimit: 5 }],
    ['a burst beyond 5000', { rateLimit: 5, burstLimit: 5001 }],
  ])(
    'reads %s as no limits of its own: the defaults, never a locked-out or unlimited key',
    async (_n, extra) => {
      const { limits: _none, ...item } = apiKeyRecord(HASH);
      ddb.on(GetCommand).resolves({ Item: { ...item, ...extra } });
      expect((await repository.getByHash(HASH))?.limits).toBeNull();
    },
  );

  it('returns undefined for an unknown hash', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(repository.getByHash(HASH)).resolves.toBeUndefined();
  });

  it('turns throttling into StorageUnavailableError', async () => {
    ddb.on(GetCommand).rejects(dynamoErrors.throttled());
    await expect(repository.getByHash(HASH)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('DynamoApiKeyRepository.create', () => {
  it('stores the record under its hash without overwriting an existing key', async () => {
    ddb.on(PutCommand).resolves({});
    const record = apiKeyRecord(HASH);
    await repository.create(record);
    const { limits: _none, ...item } = record;
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'keys-t',
      Item: item,
      ConditionExpression: 'attribute_not_exists(keyHash)',
    });
  });

  it('stores limits of its own as rateLimit and burstLimit', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(apiKeyRecord(HASH, { limits: { rate: 3, burst: 6 } }));
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      rateLimit: 3,
      burstLimit: 6,
    });
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).not.toHaveProperty('limits');
  });
});

/** The query that finds a key by its id, on the keyId index. */
const keyIdQuery = (keyId: string) => ({
  TableName: 'keys-t',
  IndexName: API_KEY_ID_INDEX,
  KeyConditionExpression: 'keyId = :k',
  ExpressionAttributeValues: { ':k': keyId },
});

/** An update of the key under HASH, conditioned on its being there and active, answering the new item. */
const activeKeyUpdate = (UpdateExpression: string, values: Record<string, unknown> = {}) => ({
  TableName: 'keys-t',
  Key: { keyHash: HASH },
  UpdateExpression,
  ConditionExpression: 'attribute_exists(keyHash) AND #s = :active',
  ExpressionAttributeNames: { '#s': 'status' },
  ExpressionAttributeValues: { ':active': 'ACTIVE', ...values },
  ReturnValues: 'ALL_NEW',
});

describe('DynamoApiKeyRepository.setLimits', () => {
  const KEY_ID = 'key_0123456789abcdef01234567';
  const active = () => {
    const { limits: _none, ...item } = apiKeyRecord(HASH, { keyId: KEY_ID });
    return item;
  };
  const conditionFailed = () =>
    Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });

  it('finds the key on the keyId index, then sets both limits on an active key and returns it', async () => {
    ddb.on(QueryCommand).resolves({ Items: [active()] });
    ddb.on(UpdateCommand).resolves({ Attributes: { ...active(), rateLimit: 4, burstLimit: 8 } });
    await expect(repository.setLimits(KEY_ID, { rate: 4, burst: 8 })).resolves.toEqual(
      apiKeyRecord(HASH, { keyId: KEY_ID, limits: { rate: 4, burst: 8 } }),
    );
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toEqual(keyIdQuery(KEY_ID));
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual(
      activeKeyUpdate('SET rateLimit = :rate, burstLimit = :burst', { ':rate': 4, ':burst': 8 }),
    );
  });

  it('removes both limits when cleared', async () => {
    ddb.on(QueryCommand).resolves({ Items: [{ ...active(), rateLimit: 4, burstLimit: 8 }] });
    ddb.on(UpdateCommand).resolves({ Attributes: active() });
    await expect(repository.setLimits(KEY_ID, null)).resolves.toMatchObject({ limits: null });
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual(
      activeKeyUpdate('REMOVE rateLimit, burstLimit'),
    );
  });

  it('writes nothing for a revoked key and returns it as it is', async () => {
    const revoked = { ...active(), status: 'REVOKED', revokedAt: '2026-01-02T00:00:00.000Z' };
    ddb.on(QueryCommand).resolves({ Items: [revoked] });
    await expect(repository.setLimits(KEY_ID, { rate: 1, burst: 1 })).resolves.toMatchObject({
      status: 'REVOKED',
      limits: null,
    });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('returns undefined and writes nothing when no key has that id', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await expect(repository.setLimits('key_missing', null)).resolves.toBeUndefined();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('reports the key as stored when it was revoked after the index was read', async () => {
    ddb.on(QueryCommand).resolves({ Items: [active()] });
    ddb.on(UpdateCommand).rejects(conditionFailed());
    ddb
      .on(GetCommand)
      .resolves({ Item: { ...active(), status: 'REVOKED', revokedAt: '2026-01-02T00:00:00.000Z' } });
    await expect(repository.setLimits(KEY_ID, { rate: 1, burst: 1 })).resolves.toMatchObject({
      status: 'REVOKED',
      limits: null,
    });
  });

  it('turns an outage during the update into StorageUnavailableError', async () => {
    ddb.on(QueryCommand).resolves({ Items: [active()] });
    ddb.on(UpdateCommand).rejects(dynamoErrors.internal());
    await expect(repository.setLimits(KEY_ID, null)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('DynamoApiKeyRepository.revoke', () => {
  const KEY_ID = 'key_0123456789abcdef01234567';
  const NOW = '2026-03-01T12:00:00.000Z';

  it('finds the key by its id on the keyId index', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await repository.revoke(KEY_ID, NOW);
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toEqual(keyIdQuery(KEY_ID));
  });

  it('marks an active key REVOKED with the given time, under its hash, and returns the updated record', async () => {
    const revoked = apiKeyRecord(HASH, { keyId: KEY_ID, status: 'REVOKED', revokedAt: NOW });
    ddb.on(QueryCommand).resolves({ Items: [apiKeyRecord(HASH, { keyId: KEY_ID })] });
    ddb.on(UpdateCommand).resolves({ Attributes: revoked });
    await expect(repository.revoke(KEY_ID, NOW)).resolves.toEqual(revoked);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'keys-t',
      Key: { keyHash: HASH },
      UpdateExpression: 'SET #s = :revoked, revokedAt = :at',
      ConditionExpression: 'attribute_exists(keyHash) AND #s <> :revoked',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':revoked': 'REVOKED', ':at': NOW },
      ReturnValues: 'ALL_NEW',
    });
  });

  it('only updates a key that still exists and is not revoked yet, whatever the index said', async () => {
    ddb.on(QueryCommand).resolves({ Items: [apiKeyRecord(HASH, { keyId: KEY_ID })] });
    ddb.on(UpdateCommand).resolves({ Attributes: apiKeyRecord(HASH, { status: 'REVOKED', revokedAt: NOW }) });
    await repository.revoke(KEY_ID, NOW);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.ConditionExpression).toBe(
      'attribute_exists(keyHash) AND #s <> :revoked',
    );
  });

  it('keeps the first revocation time when the index had not seen it yet, reporting the key as stored', async () => {
    const revokedEarlier = apiKeyRecord(HASH, {
      keyId: KEY_ID,
      status: 'REVOKED',
      revokedAt: '2026-01-02T00:00:00.000Z',
    });
    // The index still shows the key active; the table knows better, so the conditional update fails.
    ddb.on(QueryCommand).resolves({ Items: [apiKeyRecord(HASH, { keyId: KEY_ID })] });
    ddb.on(UpdateCommand).rejects(
      Object.assign(new Error('The conditional request failed'), {
        name: 'ConditionalCheckFailedException',
      }),
    );
    ddb.on(GetCommand).resolves({ Item: revokedEarlier });
    await expect(repository.revoke(KEY_ID, NOW)).resolves.toEqual(revokedEarlier);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({
      Key: { keyHash: HASH },
      ConsistentRead: true,
    });
  });

  it('reports no key when it was deleted between the lookup and the update', async () => {
    ddb.on(QueryCommand).resolves({ Items: [apiKeyRecord(HASH, { keyId: KEY_ID })] });
    ddb.on(UpdateCommand).rejects(
      Object.assign(new Error('The conditional request failed'), {
        name: 'ConditionalCheckFailedException',
      }),
    );
    ddb.on(GetCommand).resolves({});
    await expect(repository.revoke(KEY_ID, NOW)).resolves.toBeUndefined();
  });

  it('leaves an already revoked key alone and keeps its original revokedAt', async () => {
    const earlier = apiKeyRecord(HASH, {
      keyId: KEY_ID,
      status: 'REVOKED',
      revokedAt: '2026-01-02T00:00:00.000Z',
    });
    ddb.on(QueryCommand).resolves({ Items: [earlier] });
    // What an (unwanted) second update would return: the key revoked again, at the new time.
    ddb.on(UpdateCommand).resolves({ Attributes: { ...earlier, revokedAt: NOW } });
    const result = await repository.revoke(KEY_ID, NOW);
    expect(result).toEqual(earlier);
    expect(result?.revokedAt).toBe('2026-01-02T00:00:00.000Z');
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('returns undefined and writes nothing when no key has that id', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    ddb.on(UpdateCommand).resolves({ Attributes: apiKeyRecord(HASH) });
    await expect(repository.revoke('key_missing', NOW)).resolves.toBeUndefined();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('turns throttling of the lookup into StorageUnavailableError', async () => {
    ddb.on(QueryCommand).rejects(dynamoErrors.throttling());
    await expect(repository.revoke(KEY_ID, NOW)).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it('turns an outage during the update into StorageUnavailableError', async () => {
    ddb.on(QueryCommand).resolves({ Items: [apiKeyRecord(HASH, { keyId: KEY_ID })] });
    ddb.on(UpdateCommand).rejects(dynamoErrors.internal());
    await expect(repository.revoke(KEY_ID, NOW)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('DynamoApiKeyRepository.list', () => {
  const key = (n: number, overrides: Partial<ApiKeyRecord> = {}) =>
    apiKeyRecord(String(n).repeat(64), {
      keyId: `key_${n}`,
      createdAt: `2026-01-0${n}T00:00:00.000Z`,
      ...overrides,
    });

  it('scans the whole table without a filter when no user is given', async () => {
    ddb.on(ScanCommand).resolves({ Items: [key(1)] });
    await expect(repository.list()).resolves.toEqual([key(1)]);
    expect(ddb.commandCalls(ScanCommand)).toHaveLength(1);
    const input = ddb.commandCalls(ScanCommand)[0]?.args[0].input;
    expect(input).toEqual({ TableName: 'keys-t' });
    expect(input).not.toHaveProperty('FilterExpression');
  });

  it('follows LastEvaluatedKey until the last page', async () => {
    ddb
      .on(ScanCommand)
      .resolvesOnce({ Items: [key(1)], LastEvaluatedKey: { keyHash: key(1).keyHash } })
      .resolvesOnce({ Items: [], LastEvaluatedKey: { keyHash: 'empty-page' } })
      .resolvesOnce({ Items: [key(2), key(3)] });
    await expect(repository.list()).resolves.toEqual([key(1), key(2), key(3)]);
    const starts = ddb.commandCalls(ScanCommand).map((c) => c.args[0].input.ExclusiveStartKey);
    expect(starts).toEqual([undefined, { keyHash: key(1).keyHash }, { keyHash: 'empty-page' }]);
  });

  it('lists keys oldest first, whatever order the pages come in', async () => {
    ddb
      .on(ScanCommand)
      .resolvesOnce({ Items: [key(3), key(1)], LastEvaluatedKey: { keyHash: key(1).keyHash } })
      .resolvesOnce({ Items: [key(2)] });
    const listed = await repository.list();
    expect(listed.map((k) => k.keyId)).toEqual(['key_1', 'key_2', 'key_3']);
  });

  it("filters by the user's id on every page when a user is given", async () => {
    ddb
      .on(ScanCommand)
      .resolvesOnce({ Items: [key(1)], LastEvaluatedKey: { keyHash: key(1).keyHash } })
      .resolvesOnce({ Items: [key(2)] });
    await repository.list('owner-1');
    const inputs = ddb.commandCalls(ScanCommand).map((c) => c.args[0].input);
    expect(inputs).toEqual([
      {
        TableName: 'keys-t',
        FilterExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': 'owner-1' },
      },
      {
        TableName: 'keys-t',
        ExclusiveStartKey: { keyHash: key(1).keyHash },
        FilterExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': 'owner-1' },
      },
    ]);
  });

  it("returns only the given user's keys, never another user's", async () => {
    const table = [key(1, { userId: 'alice' }), key(2, { userId: 'bob' }), key(3, { userId: 'alice' })];
    // A table of one item per page, applying the filter as DynamoDB does (after reading the page).
    let scans = 0;
    ddb.on(ScanCommand).callsFake((input: ScanCommandInput) => {
      if (++scans > 2 * table.length) throw new Error('the scan never reached the last page');
      const index = input.ExclusiveStartKey
        ? table.findIndex((k) => k.keyHash === input.ExclusiveStartKey?.keyHash) + 1
        : 0;
      const item = table[index] as ApiKeyRecord;
      const wanted =
        input.FilterExpression === 'userId = :u' ? input.ExpressionAttributeValues?.[':u'] : undefined;
      return {
        Items: wanted === undefined || item.userId === wanted ? [item] : [],
        ...(index < table.length - 1 ? { LastEvaluatedKey: { keyHash: item.keyHash } } : {}),
      };
    });
    const listed = await repository.list('bob');
    expect(listed.map((k) => k.keyId)).toEqual(['key_2']);
    expect((await repository.list('alice')).map((k) => k.keyId)).toEqual(['key_1', 'key_3']);
  });

  it('turns throttling on a later page into StorageUnavailableError', async () => {
    ddb
      .on(ScanCommand)
      .resolvesOnce({ Items: [key(1)], LastEvaluatedKey: { keyHash: key(1).keyHash } })
      .rejectsOnce(dynamoErrors.throttled());
    await expect(repository.list()).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});
