import { beforeAll, describe, expect, it, vi } from 'vitest';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { Fault } from '#test/support/fault-proxy';
import { useRuntimeBehindProxy } from '#test/support/fault-suite';
import { apiCall, type CallResult } from '#test/support/local-runtime';
import { LATE_ON_EVERY_ATTEMPT, MISSING_ANSWERS } from '#test/support/lost-answers';
import { scanItems } from '#test/support/stored-items';

// The functions' AWS clients run with the short limits: a late DynamoDB costs a fraction of a second.
vi.mock('#lib/platform/aws-clients', async (original) =>
  (await import('#test/support/short-aws-limits')).withShortLimits(await original()),
);

/**
 * Retries converge for the webhook endpoints' writes: the create's conditional put and the delete's
 * tombstone land, and their answer is lost or comes after the attempt's deadline. A create's SDK retry
 * meets its own endpoint (the id is drawn before the write), and a keyed create retried after a 503
 * answers that same endpoint; a delete retried, by the SDK or by the caller after a 503, answers 204.
 * Exactly one endpoint, or none, is left.
 */
const env = useRuntimeBehindProxy();

const apiKey = () => String(env().runtime.demo?.apiKey);
const ownerId = () => String(env().runtime.demo?.userId);

function create(url: string, headers: Record<string, string> = {}): Promise<CallResult> {
  return apiCall(env().runtime, apiKey(), 'POST', '/api/embed/webhooks', { url }, headers);
}

function remove(id: string): Promise<CallResult> {
  return apiCall(env().runtime, apiKey(), 'DELETE', `/api/embed/webhooks/${id}`);
}

async function listed(): Promise<string[]> {
  const list = await apiCall(env().runtime, apiKey(), 'GET', '/api/embed/webhooks');
  expect(list.status, list.text).toBe(200);
  return (list.body.data as Array<{ id: string }>).map((webhook) => webhook.id);
}

/** Every item of the owner's in the webhooks table, read from the DynamoDB behind the proxy. */
const storedItems = () =>
  scanItems(env().upstream, LOCAL_TABLE_NAMES.webhooks, 'ownerUserId = :o', { ':o': ownerId() });

/** The endpoints stored with this URL (tombstones hold no URL). */
async function endpointsWithUrl(url: string): Promise<Record<string, unknown>[]> {
  return (await storedItems()).filter((item) => item.url === url);
}

/** Each webhooks-table request since `from`, as `operation:what the proxy did`. */
function requestsSince(from: number): string[] {
  return env()
    .proxy.requests.slice(from)
    .filter((r) => r.table === LOCAL_TABLE_NAMES.webhooks)
    .map((r) => `${r.operation}:${r.fault}`);
}

/** Applies `fault` to the webhooks table's requests of one operation (the endpoint's put, unless told). */
const injectOnWebhooks = (fault: Fault, operation = 'PutItem') =>
  env().proxy.inject(fault, { table: LOCAL_TABLE_NAMES.webhooks, operation });

let counter = 0;
const hookUrl = (name: string) => `http://127.0.0.1:9/${name}-${++counter}`;

async function expectOneEndpoint(url: string, answer: CallResult) {
  expect(answer.status, answer.text).toBe(201);
  const webhook = answer.body.webhook as { id: string; createdAt: string };
  expect(answer.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const stored = await endpointsWithUrl(url);
  expect(stored.map((item) => item.webhookId)).toEqual([webhook.id]);
  expect(stored[0]?.createdAt).toBe(webhook.createdAt);
  expect(await listed()).toContain(webhook.id);
}

/** Deleted: a tombstone under the key holding nothing of the endpoint, in no listing. */
async function expectDeleted(id: string) {
  const item = (await storedItems()).find((stored) => stored.webhookId === id);
  expect(Object.keys(item ?? {}).sort()).toEqual(['deletedAt', 'ownerUserId', 'ttl', 'webhookId']);
  expect(await listed()).not.toContain(id);
}

/** The owner's registry of endpoint places (at most 16): the claims it holds. */
async function claims(): Promise<string[]> {
  const registry = (await storedItems()).find((item) => item.webhookId === 'registry');
  return Object.keys((registry?.claims ?? {}) as Record<string, string>).sort();
}

beforeAll(async () => {
  // The owner's first create makes its registry; the faults below meet the writes of a create after it.
  expect((await create(hookUrl('first'))).status).toBe(201);
});

describe('POST /api/embed/webhooks when the endpoint put lands but its answer goes missing', () => {
  it.each(MISSING_ANSWERS)('answers 201 with the one endpoint it wrote when %s', async (_name, fault) => {
    const url = hookUrl('create');
    await injectOnWebhooks(fault);
    const seen = env().proxy.requests.length;
    const answer = await create(url);
    // The place was claimed, the put landed, its answer went missing, and the SDK's retry was refused and
    // read that very endpoint.
    expect(requestsSince(seen)).toEqual([
      'UpdateItem:none',
      `PutItem:${fault.kind}`,
      'PutItem:none',
      'GetItem:none',
    ]);
    await env().proxy.clear();
    await expectOneEndpoint(url, answer);
    expect(await claims()).toContain((answer.body.webhook as { id: string }).id);
  });

  it.each(MISSING_ANSWERS)('claims one place when the claim lands but %s', async (_name, fault) => {
    const url = hookUrl('claim');
    const before = (await claims()).length;
    await injectOnWebhooks(fault, 'UpdateItem');
    const seen = env().proxy.requests.length;
    const answer = await create(url);
    // The SDK's retry of the claim meets its own place (the id is drawn before), and the create goes on.
    expect(requestsSince(seen)).toEqual([`UpdateItem:${fault.kind}`, 'UpdateItem:none', 'PutItem:none']);
    await env().proxy.clear();
    await expectOneEndpoint(url, answer);
    expect(await claims()).toHaveLength(before + 1);
  });

  it('answers 503 when every answer is late, and a retry with the same Idempotency-Key answers that endpoint', async () => {
    const url = hookUrl('create-late');
    const key = { 'Idempotency-Key': `hook-late-${counter}` };
    await injectOnWebhooks(LATE_ON_EVERY_ATTEMPT);
    const first = await create(url, key);
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    await env().proxy.clear();
    // The endpoint is stored, and the retry, holding the id the key fixed, meets it.
    expect(await endpointsWithUrl(url)).toHaveLength(1);
    const retry = await create(url, key);
    await expectOneEndpoint(url, retry);
    const replay = await create(url, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
    expect(await endpointsWithUrl(url)).toHaveLength(1);
  });
});

describe('DELETE /api/embed/webhooks/{id} when the tombstone lands but its answer goes missing', () => {
  async function endpoint(name: string): Promise<string> {
    const created = await create(hookUrl(name));
    expect(created.status, created.text).toBe(201);
    return (created.body.webhook as { id: string }).id;
  }

  it.each(MISSING_ANSWERS)('answers 204, not 404, when %s', async (_name, fault) => {
    const id = await endpoint('delete');
    await injectOnWebhooks(fault);
    const seen = env().proxy.requests.length;
    const answer = await remove(id);
    expect(answer.status, answer.text).toBe(204);
    // The tombstone landed, its answer went missing, the SDK's retry was refused and read it back, and the
    // endpoint's place was given back.
    expect(requestsSince(seen)).toEqual([
      `PutItem:${fault.kind}`,
      'PutItem:none',
      'GetItem:none',
      'UpdateItem:none',
    ]);
    await env().proxy.clear();
    await expectDeleted(id);
    expect(await claims()).not.toContain(id);
  });

  it.each(MISSING_ANSWERS)(
    'gives the place back once when the release lands but %s',
    async (_name, fault) => {
      const id = await endpoint('release');
      await injectOnWebhooks(fault, 'UpdateItem');
      const answer = await remove(id);
      expect(answer.status, answer.text).toBe(204);
      await env().proxy.clear();
      await expectDeleted(id);
      expect(await claims()).not.toContain(id);
    },
  );

  it('answers 503 when every answer is late, and the caller’s retry answers 204', async () => {
    const id = await endpoint('delete-late');
    await injectOnWebhooks(LATE_ON_EVERY_ATTEMPT);
    const first = await remove(id);
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    await env().proxy.clear();
    const retry = await remove(id);
    expect(retry.status, retry.text).toBe(204);
    await expectDeleted(id);
  });
});

describe('POST /api/embed/webhooks/{id}/rotate-secret when the rotation lands but its answer goes missing', () => {
  async function endpoint(name: string): Promise<string> {
    const created = await create(hookUrl(name));
    expect(created.status, created.text).toBe(201);
    return (created.body.webhook as { id: string }).id;
  }
  const rotate = (id: string, headers: Record<string, string> = {}) =>
    apiCall(env().runtime, apiKey(), 'POST', `/api/embed/webhooks/${id}/rotate-secret`, undefined, headers);
  const stored = async (id: string) => (await storedItems()).find((item) => item.webhookId === id);

  it.each(MISSING_ANSWERS)(
    'answers 200 with the next secret, rotated once, when %s',
    async (_name, fault) => {
      const id = await endpoint('rotate');
      await injectOnWebhooks(fault, 'UpdateItem');
      const seen = env().proxy.requests.length;
      const answer = await rotate(id);
      // The endpoint was read, the update landed and its answer went missing; the SDK's retry was refused
      // by its condition, and the re-read found this rotation's id.
      expect(requestsSince(seen)).toEqual([
        'GetItem:none',
        `UpdateItem:${fault.kind}`,
        'UpdateItem:none',
        'GetItem:none',
      ]);
      await env().proxy.clear();
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.secret).toMatch(/^whsec_/);
      expect(await stored(id)).toMatchObject({ secretVersion: 2, previousSecretVersion: 1 });
    },
  );

  it('answers 503 when every answer is late, and a retry with the same Idempotency-Key answers that rotation', async () => {
    const id = await endpoint('rotate-late');
    const key = { 'Idempotency-Key': `rotate-late-${counter}` };
    await injectOnWebhooks(LATE_ON_EVERY_ATTEMPT, 'UpdateItem');
    const first = await rotate(id, key);
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    await env().proxy.clear();
    // The rotation is stored; the retry, holding the rotation id the key fixed, answers it.
    expect(await stored(id)).toMatchObject({ secretVersion: 2 });
    const retry = await rotate(id, key);
    expect(retry.status, retry.text).toBe(200);
    expect(await stored(id)).toMatchObject({ secretVersion: 2, previousSecretVersion: 1 });
    const replay = await rotate(id, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
  });
});
