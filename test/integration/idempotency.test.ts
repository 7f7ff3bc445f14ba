import { beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { idempotencyRecordId } from '#lib/domain/idempotency';
import type { LocalRuntime } from '#local/runtime';
import { validBody } from '#test/support/fixtures';
import { call, keyOwner, storeIdempotencyRecord } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

const runtime = useTestRuntime();
let demo: NonNullable<LocalRuntime['demo']>;
beforeAll(() => {
  demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
});

const body = (userId: string) => JSON.stringify(validBody({ boardId: demo.publicBoardId, userId }));
const create = (payload: string, idempotencyKey: string | undefined, apiKey = demo.apiKey) =>
  call(runtime, '/api/embed/sessions', {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Content-Type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
    },
    body: payload,
  });

describe('POST /api/embed/sessions with an Idempotency-Key', () => {
  it('answers a repeat with the same session, token and embedUrl, marked as replayed', async () => {
    const first = await create(body('idem-1'), 'key-same');
    const second = await create(body('idem-1'), 'key-same');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('cache-control')).toBe('no-store');
    expect(second.text).toBe(first.text);
    const listed = await call(runtime, '/api/embed/sessions?userId=idem-1', {
      headers: { Authorization: `Bearer ${demo.apiKey}` },
    });
    expect((listed.body.data as unknown[]).length).toBe(1);
  });

  it('creates a new session for every request without the header', async () => {
    const first = await create(body('idem-none'), undefined);
    const second = await create(body('idem-none'), undefined);
    expect(first.body.sessionToken).not.toBe(second.body.sessionToken);
  });

  it('answers 422 for the same key with another body', async () => {
    await create(body('idem-2'), 'key-other-body');
    const result = await create(body('idem-2-changed'), 'key-other-body');
    expect(result.status).toBe(422);
    expect(result.body).toEqual({
      error: 'Unprocessable Content',
      message: 'This Idempotency-Key was already used with another request body',
    });
  });

  it('answers 409 while a request with the key is still in progress', async () => {
    const key = 'key-in-progress';
    await storeIdempotencyRecord(runtime, demo.userId, key, body('idem-3'), {
      state: 'IN_PROGRESS',
      lockedUntilMs: Date.now() + 30_000,
    });
    const result = await create(body('idem-3'), key);
    expect(result.status).toBe(409);
    expect(result.body.error).toBe('Conflict');
    // When to retry: when the earlier request's hold on the key ends (30 s here, written by hand).
    expect(Number(result.headers.get('retry-after'))).toBeGreaterThanOrEqual(29);
    expect(Number(result.headers.get('retry-after'))).toBeLessThanOrEqual(30);
  });

  it('takes over a key whose earlier request ran out of time, or whose 24 hours are over', async () => {
    for (const [key, item] of [
      ['key-stale-lock', { state: 'IN_PROGRESS', lockedUntilMs: Date.now() - 1 }],
      [
        'key-expired',
        { state: 'COMPLETE', status: 201, sealed: 'x.y.z', ttl: Math.floor(Date.now() / 1000) - 1 },
      ],
    ] as const) {
      await storeIdempotencyRecord(runtime, demo.userId, key, body('idem-4'), item);
      expect((await create(body('idem-4'), key)).status).toBe(201);
    }
  });

  it('keeps the keys of different API key owners apart', async () => {
    const other = await keyOwner(runtime, 'idem-other-owner');
    const mine = await create(body('idem-5'), 'shared-key');
    const theirs = await create(body('idem-5'), 'shared-key', other.apiKey);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.sessionToken).not.toBe(mine.body.sessionToken);
  });

  it('replays errors other than 5xx', async () => {
    const missing = JSON.stringify(validBody({ boardId: 'no-such-board' }));
    const first = await create(missing, 'key-404');
    const second = await create(missing, 'key-404');
    expect([first.status, second.status]).toEqual([404, 404]);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it.each([['has space'], ['x'.repeat(256)], ['é']])(
    'answers 400 for the Idempotency-Key %j',
    async (key) => {
      const result = await create(body('idem-6'), key);
      expect(result.status).toBe(400);
      expect(result.body.message).toBe(
        'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
      );
    },
  );

  it('stores no token in clear: the record holds only the sealed answer', async () => {
    const created = await create(body('idem-7'), 'key-sealed');
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
      const { Item } = await db.send(
        new GetCommand({
          TableName: runtime.tables.idempotency,
          Key: { recordId: idempotencyRecordId(demo.userId, 'key-sealed') },
        }),
      );
      expect(Item?.state).toBe('COMPLETE');
      expect(JSON.stringify(Item)).not.toContain(String(created.body.sessionToken));
      expect(JSON.stringify(Item)).not.toContain('key-sealed');
    } finally {
      db.destroy();
    }
  });
});
