import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { API_KEY_ID_INDEX, LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { ApiKeyRecord } from '#lib/domain/api-key';
import { MISSING_ANSWERS } from '#test/support/lost-answers';
import { SHORT_LIMITS } from '#test/support/short-aws-limits';
import { queryItems } from '#test/support/stored-items';
import { useTablesBehindProxy } from '#test/support/tables-behind-proxy';

/**
 * Retries converge for an API key's conditional put (the admin CLI's create-api-key, the local runtime's
 * demo key): its answer is lost or late after it landed, and the SDK's retry, refused, reads back the
 * key this very write stored. One key, and the operator is shown it; a different key under the same
 * hash is still refused.
 */
const tables = useTablesBehindProxy(SHORT_LIMITS);
let keys: DynamoApiKeyRepository;
beforeAll(() => {
  keys = new DynamoApiKeyRepository(tables().db, LOCAL_TABLE_NAMES.apiKeys);
});

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

const keysWithId = (keyId: string) =>
  queryItems(tables().db, LOCAL_TABLE_NAMES.apiKeys, { keyId }, API_KEY_ID_INDEX);

describe('an API key put whose answer goes missing after it landed', () => {
  it.each(MISSING_ANSWERS)('succeeds with the one key it stored when %s', async (_name, fault) => {
    const key = record();
    await tables().proxy.inject(fault, { operation: 'PutItem', table: LOCAL_TABLE_NAMES.apiKeys });
    const seen = tables().proxy.requests.length;
    await keys.create(key);
    await tables().proxy.clear();
    const puts = tables()
      .proxy.requests.slice(seen)
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
