import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY_ID_INDEX, LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { ApiKeyRecord } from '#lib/domain/api-key';
import { DynamoApiKeyRepository } from '#lib/dynamodb/api-keys';
import { createDocumentClient } from '#lib/dynamodb/client';
import { ensureTables } from '#local/dynamodb';
import { type Fault, type FaultProxy, startFaultProxy } from '#test/support/fault-proxy';
import { startTestDynamo } from '#test/support/test-dynamo';

/**
 * Retries converge for an API key's conditional put (the admin CLI's create-api-key, the local runtime's
 * demo key): its answer is lost or late after it landed, and the SDK's retry, refused, reads back the
 * key this very write stored. One key, and the operator is shown it; a different key under the same
 * hash is still refused.
 */
let dynamo: { endpoint: string; close(): Promise<void> };
let proxy: FaultProxy;
let db: ReturnType<typeof createDocumentClient>;
let keys: DynamoApiKeyRepository;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
  proxy = await startFaultProxy(dynamo.endpoint);
  db = createDocumentClient({ endpoint: proxy.endpoint, region: 'local' });
  keys = new DynamoApiKeyRepository(db, LOCAL_TABLE_NAMES.apiKeys);
});
afterAll(async () => {
  db?.destroy();
  await proxy?.close();
  await dynamo?.close();
});
beforeEach(() => proxy.clear());

/** The write lands, then its answer is lost once: `then` says how. */
function lostAnswer(then: 'reset' | 'internal-error'): Fault {
  return { kind: 'lose-answer', then };
}

let counter = 0;
function record(): ApiKeyRecord {
  counter += 1;
  const hex = counter.toString(16).padStart(24, '0');
  return {
    keyHash: hex.padStart(64, 'a'),
    keyId: `key_${hex}`,
    userId: `fault-key-owner-${counter}`,
    name: null,
    status: 'ACTIVE',
    createdAt: '2026-01-01T00:00:00.000Z',
    revokedAt: null,
    limits: null,
  };
}

async function keysWithId(keyId: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: LOCAL_TABLE_NAMES.apiKeys,
      IndexName: API_KEY_ID_INDEX,
      KeyConditionExpression: 'keyId = :k',
      ExpressionAttributeValues: { ':k': keyId },
    }),
  );
  return Items;
}

describe('an API key put whose answer goes missing after it landed', () => {
  it.each([
    ['its answer is lost (connection reset)', lostAnswer('reset')],
    ['its answer is lost (InternalServerError)', lostAnswer('internal-error')],
    ['its first answer comes after the deadline', { kind: 'late-answer', delayMs: 1_500, count: 1 } as Fault],
  ])('succeeds with the one key it stored when %s', async (_name, fault) => {
    const key = record();
    await proxy.inject(fault, { operation: 'PutItem', table: LOCAL_TABLE_NAMES.apiKeys });
    const seen = proxy.requests.length;
    await keys.create(key);
    await proxy.clear();
    const puts = proxy.requests
      .slice(seen)
      .filter((r) => r.operation === 'PutItem' && r.table === LOCAL_TABLE_NAMES.apiKeys);
    expect(puts.map((r) => r.fault)).toEqual([fault.kind, 'none']);
    expect(await keys.getByHash(key.keyHash)).toEqual(key);
    expect(await keysWithId(key.keyId)).toHaveLength(1);
  });

  it('still refuses another key under a stored key’s hash', async () => {
    const key = record();
    await keys.create(key);
    await expect(keys.create({ ...key, keyId: 'key_ffffffffffffffffffffffff' })).rejects.toMatchObject({
      name: 'ConditionalCheckFailedException',
    });
    expect(await keys.getByHash(key.keyHash)).toEqual(key);
  });
});
