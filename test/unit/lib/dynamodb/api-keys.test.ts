import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../../../lib/dynamodb/api-keys';
import { createDocumentClient } from '../../../../lib/dynamodb/client';
import { StorageUnavailableError } from '../../../../lib/errors';
import { dynamoErrors } from '../../helpers/dynamo-errors';
import { apiKeyRecord } from '../../helpers/fakes';

const ddb = mockClient(DynamoDBDocumentClient);
const repository = new DynamoApiKeyRepository(
  createDocumentClient({ region: 'us-east-1', endpoint: undefined }),
  'keys-t',
);
const HASH = 'f'.repeat(64);

beforeEach(() => {
  ddb.reset();
});
afterAll(() => {
  ddb.restore();
});

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
    ddb.on(GetCommand).resolves({ Item: record });
    await expect(repository.getByHash(HASH)).resolves.toEqual(record);
  });

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
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'keys-t',
      Item: record,
      ConditionExpression: 'attribute_not_exists(keyHash)',
    });
  });
});
