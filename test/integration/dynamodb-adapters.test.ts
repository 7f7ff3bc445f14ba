import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import type { StoredSession } from '#lib/domain/session';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { METADATA_MAX_BYTES_CEILING } from '#lib/platform/config';
import { ensureTables } from '#local/dynamodb';
import { startTestDynamo } from '#test/support/test-dynamo';

/**
 * The session adapter against a real DynamoDB implementation (the embedded dynalite, or AWS's DynamoDB
 * Local in `npm run test:dynamodb-local`, with the tables built from lib/definitions/tables.ts): what the
 * unit tests only check as request parameters.
 */
let dynamo: { endpoint: string; close(): Promise<void> };
let db: ReturnType<typeof createDocumentClient>;
let sessions: DynamoSessionRepository;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
  db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
  sessions = new DynamoSessionRepository(db, LOCAL_TABLE_NAMES.sessions);
});
afterAll(async () => {
  db?.destroy();
  await dynamo?.close();
});

function session(id: string, token: string, overrides: Partial<StoredSession> = {}): StoredSession {
  return {
    id,
    boardId: 'board-1',
    tokenHash: hashCredential(token),
    userId: 'customer-42',
    email: 'ada@example.com',
    firstName: 'Ada',
    lastName: null,
    avatarUrl: null,
    plan: null,
    // As JSON.parse reads a request body: "__proto__" an own key, not the object's prototype.
    metadata: JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}, "n": 1.5}'),
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-31T00:00:00.000Z',
    ...overrides,
  };
}

describe('DynamoSessionRepository on the embedded DynamoDB', () => {
  it('finds a stored session by its token hash through the token index, exactly as stored', async () => {
    const stored = session('s-1', 'token-one-'.padEnd(32, 'x'));
    await sessions.create(stored);
    const found = await sessions.findByTokenHash(stored.tokenHash);
    expect(found).toEqual(stored);
    expect(Object.keys(found?.metadata ?? {}).sort()).toEqual(['__proto__', 'constructor', 'n']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never overwrites an existing session: a second put with the same id is refused and the first stays', async () => {
    const first = session('s-2', 'token-two-'.padEnd(32, 'x'));
    await sessions.create(first);
    const second = session('s-2', 'token-other-'.padEnd(32, 'y'), { userId: 'someone-else' });
    await expect(sessions.create(second)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(await sessions.findByTokenHash(first.tokenHash)).toEqual(first);
    expect(await sessions.findByTokenHash(second.tokenHash)).toBeUndefined();
  });

  it('stores the TTL attribute in epoch seconds from expiresAt, and no token', async () => {
    const token = 'token-three-'.padEnd(32, 'z');
    await sessions.create(session('s-3', token, { expiresAt: '2026-02-01T00:00:00.500Z' }));
    const { Item } = await db.send(
      new GetCommand({ TableName: LOCAL_TABLE_NAMES.sessions, Key: { id: 's-3' } }),
    );
    expect(Item?.ttl).toBe(Date.parse('2026-02-01T00:00:01.000Z') / 1000);
    expect(JSON.stringify(Item)).not.toContain(token);
  });

  it('stores the largest session the API can accept: the 350 KiB metadata ceiling and every field at its longest', async () => {
    // Four-byte characters make the 256-character fields as large as they can be in bytes.
    const longest = '😀'.repeat(256);
    const metadata = { pad: 'x'.repeat(METADATA_MAX_BYTES_CEILING - '{"pad":""}'.length) };
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(METADATA_MAX_BYTES_CEILING);
    const largest = session('😀'.repeat(64), 'token-largest-'.padEnd(32, 'l'), {
      boardId: longest,
      userId: longest,
      email: `${'a'.repeat(64)}@${'b'.repeat(185)}.com`,
      firstName: longest,
      lastName: longest,
      plan: longest,
      avatarUrl: `https://example.com/${'a'.repeat(2048 - 20)}`,
      metadata,
    });
    await sessions.create(largest);
    expect(await sessions.findByTokenHash(largest.tokenHash)).toEqual(largest);
  });

  it('returns undefined for a token hash no session has', async () => {
    expect(await sessions.findByTokenHash(hashCredential('unknown'))).toBeUndefined();
  });
});
