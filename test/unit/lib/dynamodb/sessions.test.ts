import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { SESSION_TOKEN_INDEX } from '#lib/definitions/tables';
import { StorageUnavailableError } from '#lib/domain/errors';
import type { StoredSession } from '#lib/domain/session';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { mockedDocumentClient } from '#test/support/dynamo-mock';

const { ddb, db } = mockedDocumentClient();
const repository = new DynamoSessionRepository(db, 'sessions-t');

const SESSION: StoredSession = {
  id: '3f2c1e0a-0000-4000-8000-000000000001',
  boardId: 'board-1',
  tokenHash: 'a'.repeat(64),
  userId: 'customer-42',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: null,
  avatarUrl: null,
  plan: 'pro',
  metadata: { team: 'analytics', nested: { list: [1, 'two', null] } },
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-31T00:00:00.000Z',
};

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

  it('stores every session field, the TTL in epoch seconds and metadata as its JSON text', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.create(SESSION);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toEqual({
      ...SESSION,
      metadata: JSON.stringify(SESSION.metadata),
      ttl: Date.parse('2026-01-31T00:00:00.000Z') / 1000,
    });
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

  it('succeeds when the existing item is this very session (a retried put whose answer was lost)', async () => {
    ddb.on(PutCommand).rejects(refusedOver(SESSION.tokenHash));
    await expect(repository.create(SESSION)).resolves.toBeUndefined();
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('refuses with the original error when the existing item is another session', async () => {
    const refusal = refusedOver('b'.repeat(64));
    ddb.on(PutCommand).rejects(refusal);
    await expect(repository.create(SESSION)).rejects.toBe(refusal);
  });

  describe('on an engine that does not return the existing item (dynalite)', () => {
    it('reads the session by id, strongly consistent, and succeeds when it is this very session', async () => {
      ddb.on(PutCommand).rejects(dynamoErrors.conditionFailed());
      ddb.on(GetCommand).resolves({ Item: { id: SESSION.id, tokenHash: SESSION.tokenHash } });
      await expect(repository.create(SESSION)).resolves.toBeUndefined();
      expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
        TableName: 'sessions-t',
        Key: { id: SESSION.id },
        ConsistentRead: true,
        ProjectionExpression: 'tokenHash',
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

describe('DynamoSessionRepository.findByTokenHash', () => {
  it('queries the token-hash index for one item', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await repository.findByTokenHash('b'.repeat(64));
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toEqual({
      TableName: 'sessions-t',
      IndexName: SESSION_TOKEN_INDEX,
      KeyConditionExpression: 'tokenHash = :h',
      ExpressionAttributeValues: { ':h': 'b'.repeat(64) },
      Limit: 1,
    });
  });

  it('returns the session without the TTL and with its metadata parsed back', async () => {
    ddb.on(QueryCommand).resolves({
      Items: [{ ...SESSION, metadata: JSON.stringify(SESSION.metadata), ttl: 1_769_817_600 }],
    });
    await expect(repository.findByTokenHash(SESSION.tokenHash)).resolves.toEqual(SESSION);
  });

  it('returns "__proto__" metadata keys as own data, not as a prototype', async () => {
    ddb.on(QueryCommand).resolves({ Items: [{ ...SESSION, metadata: '{"__proto__":{"polluted":true}}' }] });
    const found = await repository.findByTokenHash(SESSION.tokenHash);
    expect(Object.hasOwn(found?.metadata ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(found?.metadata)).toBe(Object.prototype);
  });

  it('returns undefined when no session has the hash', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await expect(repository.findByTokenHash('c'.repeat(64))).resolves.toBeUndefined();
  });
});
