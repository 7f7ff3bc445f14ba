/**
 * At most 16 webhook endpoints per key owner, over HTTP on the local runtime (dynalite, and DynamoDB
 * Local with TEST_DYNAMODB=dynamodb-local): the 17th create is a 422 JSON error, also when many creates
 * race; a delete frees a place; stale claims and owners from before the registry are handled; and the
 * listing is paginated with a signed cursor, as the session listing is.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoWebhookRepository, WEBHOOK_CLAIM_GRACE_SECONDS } from '#lib/adapters/dynamodb/webhooks';
import { ALL_EVENT_TYPES, MAX_WEBHOOK_ENDPOINTS_PER_OWNER, newWebhookId } from '#lib/domain/webhook';
import { apiCall, type KeyOwnerFixture, keyOwner } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

const runtime = useTestRuntime();

interface WebhookBody {
  id: string;
  url: string;
  createdAt: string;
}

const LIMIT_MESSAGE = `An API key owner has at most ${MAX_WEBHOOK_ENDPOINTS_PER_OWNER} webhook endpoints: delete one before creating another`;

const freshOwner = () => keyOwner(runtime, `limit-owner-${randomUUID()}`);
const create = (who: KeyOwnerFixture, n: number | string, headers: Record<string, string> = {}) =>
  apiCall(
    runtime,
    who.apiKey,
    'POST',
    '/api/embed/webhooks',
    { url: `https://hooks.example.com/${n}` },
    headers,
  );
const list = (who: KeyOwnerFixture, query = '') =>
  apiCall(runtime, who.apiKey, 'GET', `/api/embed/webhooks${query ? `?${query}` : ''}`);

/** Every endpoint id of the owner, following nextCursor, with the page sizes met on the way. */
async function listAll(who: KeyOwnerFixture, limit: number): Promise<{ ids: string[]; pages: number[] }> {
  const ids: string[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await list(who, `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.status, page.text).toBe(200);
    const data = page.body.data as WebhookBody[];
    pages.push(data.length);
    ids.push(...data.map((webhook) => webhook.id));
    cursor = page.body.nextCursor as string | null;
  } while (cursor);
  return { ids, pages };
}

/** The owner's registry item, read from the table: which endpoint ids hold a place. */
async function registeredIds(ownerUserId: string): Promise<string[]> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    const { Item } = await db.send(
      new GetCommand({
        TableName: runtime.tables.webhooks,
        Key: { ownerUserId, webhookId: 'registry' },
        ConsistentRead: true,
      }),
    );
    return Object.keys((Item?.claims ?? {}) as Record<string, string>).sort();
  } finally {
    db.destroy();
  }
}

describe('at most 16 webhook endpoints per key owner', () => {
  it('refuses the 17th create with a 422 JSON error, and takes one again once an endpoint is deleted', async () => {
    const who = await freshOwner();
    const created: string[] = [];
    for (let n = 0; n < MAX_WEBHOOK_ENDPOINTS_PER_OWNER; n++) {
      const result = await create(who, n);
      expect(result.status, result.text).toBe(201);
      created.push((result.body.webhook as WebhookBody).id);
    }
    const refused = await create(who, 'seventeenth');
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ error: 'Unprocessable Content', message: LIMIT_MESSAGE });
    expect((await listAll(who, 100)).ids).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_OWNER);

    const deleted = await apiCall(runtime, who.apiKey, 'DELETE', `/api/embed/webhooks/${created[3]}`);
    expect(deleted.status).toBe(204);
    // A repeated delete gives no second place back.
    expect((await apiCall(runtime, who.apiKey, 'DELETE', `/api/embed/webhooks/${created[3]}`)).status).toBe(
      204,
    );
    expect((await create(who, 'after-delete')).status).toBe(201);
    expect((await create(who, 'one-too-many')).status).toBe(422);
    expect(await registeredIds(who.userId)).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_OWNER);
  });

  it('admits exactly 16 of 24 creates sent at once; the others are 422s, never a 500', async () => {
    const who = await freshOwner();
    const results = await Promise.all(Array.from({ length: 24 }, (_, n) => create(who, `race-${n}`)));
    const statuses = results.map((result) => result.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_OWNER);
    expect(statuses.filter((status) => status === 422)).toHaveLength(24 - MAX_WEBHOOK_ENDPOINTS_PER_OWNER);
    for (const result of results.filter((r) => r.status === 422))
      expect(result.body.message).toBe(LIMIT_MESSAGE);
    const listed = (await listAll(who, 100)).ids.sort();
    const admitted = results
      .filter((result) => result.status === 201)
      .map((result) => (result.body.webhook as WebhookBody).id)
      .sort();
    expect(listed).toEqual(admitted);
    expect(await registeredIds(who.userId)).toEqual(admitted);
  });

  it('counts another owner’s endpoints for that owner alone', async () => {
    const [a, b] = [await freshOwner(), await freshOwner()];
    // One after another: sending them at once is the test above's.
    for (let n = 0; n < MAX_WEBHOOK_ENDPOINTS_PER_OWNER; n++)
      expect((await create(a, `a-${n}`)).status).toBe(201);
    expect((await create(a, 'a-full')).status).toBe(422);
    expect((await create(b, 'b-first')).status).toBe(201);
  });

  it('answers a keyed create retried at the limit with its own endpoint, not a refusal', async () => {
    const who = await freshOwner();
    const key = { 'Idempotency-Key': `limit-${randomUUID()}` };
    const first = await create(who, 'keyed', key);
    expect(first.status).toBe(201);
    await Promise.all(
      Array.from({ length: MAX_WEBHOOK_ENDPOINTS_PER_OWNER - 1 }, (_, n) => create(who, `fill-${n}`)),
    );
    const again = await create(who, 'keyed', key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });

  it('takes back a place whose endpoint never came once its claim is stale, and no sooner', async () => {
    const who = await freshOwner();
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      // Sixteen claims whose creates failed before their endpoint was put: one of them long ago.
      const stale = new Date(Date.now() - (WEBHOOK_CLAIM_GRACE_SECONDS + 5) * 1000).toISOString();
      const recent = new Date().toISOString();
      const claims = Object.fromEntries(
        Array.from({ length: MAX_WEBHOOK_ENDPOINTS_PER_OWNER }, (_, n) => [
          newWebhookId(randomUUID()),
          n === 0 ? stale : recent,
        ]),
      );
      await db.send(
        new PutCommand({
          TableName: runtime.tables.webhooks,
          Item: { ownerUserId: who.userId, webhookId: 'registry', claims },
        }),
      );
      const taken = await create(who, 'takes-the-stale-place');
      expect(taken.status, taken.text).toBe(201);
      // The fifteen recent claims may still be creates under way: they hold their places.
      expect((await create(who, 'no-place-left')).status).toBe(422);
      const held = await registeredIds(who.userId);
      expect(held).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_OWNER);
      expect(held).toContain((taken.body.webhook as WebhookBody).id);
    } finally {
      db.destroy();
    }
  });

  it('counts the endpoints an owner had before registries existed', async () => {
    const who = await freshOwner();
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      for (let n = 0; n < MAX_WEBHOOK_ENDPOINTS_PER_OWNER; n++) {
        await db.send(
          new PutCommand({
            TableName: runtime.tables.webhooks,
            Item: {
              ownerUserId: who.userId,
              webhookId: newWebhookId(randomUUID()),
              url: `https://hooks.example.com/legacy-${n}`,
              events: [...ALL_EVENT_TYPES],
              createdAt: new Date(Date.now() - 86_400_000).toISOString(),
              createdByKeyId: who.keyId,
            },
          }),
        );
      }
    } finally {
      db.destroy();
    }
    expect((await create(who, 'over-the-legacy-ones')).status).toBe(422);
    expect(await registeredIds(who.userId)).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_OWNER);
  });

  it('refuses at the repository too, whoever calls it (the admin CLI, a test)', async () => {
    const who = await freshOwner();
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      const repository = new DynamoWebhookRepository(db, runtime.tables.webhooks);
      const endpoint = (n: number) => ({
        id: newWebhookId(randomUUID()),
        ownerUserId: who.userId,
        url: `https://hooks.example.com/direct-${n}`,
        events: [...ALL_EVENT_TYPES],
        description: null,
        createdAt: new Date().toISOString(),
        createdByKeyId: who.keyId,
      });
      await repository.create(endpoint(1), { maxPerOwner: 2 });
      await repository.create(endpoint(2), { maxPerOwner: 2 });
      await expect(repository.create(endpoint(3), { maxPerOwner: 2 })).rejects.toThrow(
        'at most 2 webhook endpoints',
      );
      expect(await repository.list(who.userId)).toHaveLength(2);
    } finally {
      db.destroy();
    }
  });
});

describe('GET /api/embed/webhooks, page by page', () => {
  it('pages through every endpoint oldest first, with an opaque nextCursor that is null on the last page', async () => {
    const who = await freshOwner();
    const created: string[] = [];
    for (let n = 0; n < 5; n++)
      created.push(((await create(who, `page-${n}`)).body.webhook as WebhookBody).id);
    const { ids, pages } = await listAll(who, 2);
    expect(pages).toEqual([2, 2, 1]);
    expect(ids).toEqual(created);
    const whole = await list(who);
    expect(whole.body.nextCursor).toBeNull();
    expect((whole.body.data as WebhookBody[]).map((webhook) => webhook.id)).toEqual(created);
  });

  it('neither repeats nor skips an endpoint when one is deleted between pages', async () => {
    const who = await freshOwner();
    const created: string[] = [];
    for (let n = 0; n < 4; n++)
      created.push(((await create(who, `shift-${n}`)).body.webhook as WebhookBody).id);
    const first = await list(who, 'limit=2');
    await apiCall(runtime, who.apiKey, 'DELETE', `/api/embed/webhooks/${created[0]}`);
    const second = await list(who, `limit=2&cursor=${encodeURIComponent(String(first.body.nextCursor))}`);
    expect((second.body.data as WebhookBody[]).map((webhook) => webhook.id)).toEqual(created.slice(2));
    expect(second.body.nextCursor).toBeNull();
  });

  it.each([
    ['limit=0', 'limit must be an integer from 1 to 100'],
    ['limit=101', 'limit must be an integer from 1 to 100'],
    ['limit=two', 'limit must be an integer from 1 to 100'],
    ['cursor=not-a-cursor', 'cursor is invalid or was issued for another query'],
    ['status=active', 'status is not an allowed query parameter'],
    ['limit=1&limit=2', 'limit must be given once'],
  ])('answers 400 for %s: %s', async (query, message) => {
    const result = await list(await freshOwner(), query);
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ error: 'Bad Request', message });
  });

  it('refuses a cursor issued to another key owner, or tampered with', async () => {
    const [who, other] = [await freshOwner(), await freshOwner()];
    for (let n = 0; n < 2; n++) await create(who, `cursor-${n}`);
    const cursor = String((await list(who, 'limit=1')).body.nextCursor);
    expect((await list(other, `cursor=${encodeURIComponent(cursor)}`)).status).toBe(400);
    // One character of the cursor changed to another value, whichever it was.
    const at = cursor.length - 2;
    const tampered = `${cursor.slice(0, at)}${cursor[at] === 'A' ? 'B' : 'A'}${cursor.slice(at + 1)}`;
    expect(tampered).not.toBe(cursor);
    expect((await list(who, `cursor=${encodeURIComponent(tampered)}`)).status).toBe(400);
  });
});
