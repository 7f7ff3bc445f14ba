import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { TABLE_KEYS } from '#lib/definitions/tables';
import type { LocalRuntime } from '#local/runtime';
import { createdSessionView } from '#test/support/create-session-as';
import { apiCall, call, type KeyOwnerFixture, keyOwner, testTarget } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';
import {
  startWebhookReceiver,
  verifiedByReceiver,
  type WebhookReceiver,
} from '#test/support/webhook-receiver';

/**
 * Webhook endpoints over HTTP on the local runtime, and delivery to a real receiver of the events the
 * change feed derives from the sessions the tests create and revoke; the receiver verifies each request
 * as a customer's server would. Retries follow WEBHOOK_RETRY_SECONDS (the local default, 1,2,4).
 */
const runtime = useTestRuntime();
let owner: KeyOwnerFixture;
let otherTenant: KeyOwnerFixture;
let receiver: WebhookReceiver;

beforeAll(async () => {
  const demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
  owner = { userId: demo.userId, keyId: demo.keyId, apiKey: demo.apiKey };
  otherTenant = await keyOwner(runtime, 'hook-other-tenant');
  // Fails the first request to any path ending in /flaky, answers 200 otherwise.
  receiver = await startWebhookReceiver((request, nth) =>
    request.path.endsWith('/flaky') && nth === 1 ? 500 : 200,
  );
});
afterAll(async () => {
  await receiver?.close();
});

interface WebhookBody {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  createdAt: string;
}

async function createEndpoint(who: KeyOwnerFixture, body: Record<string, unknown>, headers = {}) {
  const result = await apiCall(runtime, who.apiKey, 'POST', '/api/embed/webhooks', body, headers);
  expect(result.status, result.text).toBe(201);
  return { webhook: result.body.webhook as WebhookBody, secret: String(result.body.secret) };
}

const sessionOf = (who: KeyOwnerFixture) => createdSessionView(runtime, who);

describe.skipIf(testTarget() === 'assembly')('webhook endpoints over HTTP', () => {
  it('creates an endpoint, showing its whsec_ secret once, and lists it without the secret', async () => {
    const { webhook, secret } = await createEndpoint(owner, {
      url: `${receiver.url}/crud`,
      events: ['session.revoked'],
      description: 'revocations',
    });
    expect(webhook).toMatchObject({
      url: `${receiver.url}/crud`,
      events: ['session.revoked'],
      description: 'revocations',
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await apiCall(runtime, owner.apiKey, 'GET', '/api/embed/webhooks');
    expect(listed.status).toBe(200);
    expect((listed.body.data as WebhookBody[]).map((w) => w.id)).toContain(webhook.id);
    expect(listed.text).not.toContain('whsec_');
    expect(listed.text).not.toContain(secret.slice('whsec_'.length));
  });

  it('subscribes an endpoint created without events to every type', async () => {
    const { webhook } = await createEndpoint(owner, { url: `${receiver.url}/all` });
    expect(webhook.events).toEqual([
      'session.created',
      'session.bound',
      'session.opened',
      'session.revoked',
      'session.expired',
      'sessions.revoked',
    ]);
  });

  it('refuses a URL that is not https or loopback http, an unknown event type and unknown fields with 400', async () => {
    for (const body of [
      { url: 'http://example.com/hook' },
      { url: 'ftp://example.com/hook' },
      { url: 'https://user:pw@example.com/hook' },
      { url: `${receiver.url}/x`, events: ['session.deleted'] },
      { url: `${receiver.url}/x`, events: [] },
      { url: `${receiver.url}/x`, secret: 'mine' },
      {},
    ]) {
      const result = await apiCall(runtime, owner.apiKey, 'POST', '/api/embed/webhooks', body);
      expect(result.status, JSON.stringify(body)).toBe(400);
      expect(result.body).toEqual({ error: 'Bad Request', message: expect.any(String) });
    }
  });

  it('deletes an endpoint with 204, and again with 204; another owner’s, or none, is a 404', async () => {
    const { webhook } = await createEndpoint(owner, { url: `${receiver.url}/delete-me` });
    const byOther = await apiCall(runtime, otherTenant.apiKey, 'DELETE', `/api/embed/webhooks/${webhook.id}`);
    expect(byOther.status).toBe(404);
    expect(byOther.body).toEqual({ error: 'Not Found', message: expect.any(String) });
    const deleted = await apiCall(runtime, owner.apiKey, 'DELETE', `/api/embed/webhooks/${webhook.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    // A repeated delete (a retry whose first answer was lost) answers as the delete did.
    const again = await apiCall(runtime, owner.apiKey, 'DELETE', `/api/embed/webhooks/${webhook.id}`);
    expect(again.status).toBe(204);
    expect(again.text).toBe('');
    const listed = await apiCall(runtime, owner.apiKey, 'GET', '/api/embed/webhooks');
    expect((listed.body.data as WebhookBody[]).map((w) => w.id)).not.toContain(webhook.id);
    // Still not the other owner's to delete, once deleted either.
    expect(
      (await apiCall(runtime, otherTenant.apiKey, 'DELETE', `/api/embed/webhooks/${webhook.id}`)).status,
    ).toBe(404);
    expect(
      (
        await apiCall(
          runtime,
          owner.apiKey,
          'DELETE',
          '/api/embed/webhooks/whe_0123456789abcdef0123456789abcdef',
        )
      ).status,
    ).toBe(404);
    expect((await apiCall(runtime, owner.apiKey, 'DELETE', '/api/embed/webhooks/not-an-id')).status).toBe(
      404,
    );
  });

  it('rotates an endpoint’s secret only for its owner, refusing a bad overlap with 400 and others with 404', async () => {
    const { webhook } = await createEndpoint(owner, { url: `${receiver.url}/rotate-crud` });
    const path = `/api/embed/webhooks/${webhook.id}/rotate-secret`;
    const other = await apiCall(runtime, otherTenant.apiKey, 'POST', path, {});
    expect(other.status).toBe(404);
    const missing = await apiCall(
      runtime,
      owner.apiKey,
      'POST',
      '/api/embed/webhooks/whe_0000/rotate-secret',
    );
    expect(missing.status).toBe(404);
    for (const body of [
      { overlapSeconds: 604_801 },
      { overlapSeconds: -1 },
      { overlapSeconds: 'a day' },
      { secret: 'mine' },
    ]) {
      const refused = await apiCall(runtime, owner.apiKey, 'POST', path, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    const hour = await apiCall(runtime, owner.apiKey, 'POST', path, { overlapSeconds: 3600 });
    expect(hour.status, hour.text).toBe(200);
    expect(Date.parse(String(hour.body.previousSecretExpiresAt)) - Date.now()).toBeLessThanOrEqual(3_600_000);
  });

  it('takes a rotation whose body is only whitespace as one without a body (the default overlap)', async () => {
    const { webhook } = await createEndpoint(owner, { url: `${receiver.url}/rotate-blank` });
    const rotated = await call(runtime, `/api/embed/webhooks/${webhook.id}/rotate-secret`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.apiKey}`, 'Content-Type': 'application/json' },
      body: ' ',
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(Date.parse(String(rotated.body.previousSecretExpiresAt)) - Date.now()).toBeGreaterThan(3_600_000);
  });

  it('answers a rotation retried with the same Idempotency-Key with the same secret, rotating once', async () => {
    const { webhook } = await createEndpoint(owner, { url: `${receiver.url}/rotate-keyed` });
    const path = `/api/embed/webhooks/${webhook.id}/rotate-secret`;
    const key = { 'Idempotency-Key': `rotate-${webhook.id}` };
    const first = await apiCall(runtime, owner.apiKey, 'POST', path, undefined, key);
    const repeat = await apiCall(runtime, owner.apiKey, 'POST', path, undefined, key);
    expect(first.status, first.text).toBe(200);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body).toEqual(first.body);
    const next = await apiCall(runtime, owner.apiKey, 'POST', path, undefined, {
      'Idempotency-Key': `${key['Idempotency-Key']}-2`,
    });
    expect(next.body.secret).not.toBe(first.body.secret);
  });

  it('does not list another owner’s endpoints', async () => {
    const { webhook } = await createEndpoint(otherTenant, { url: `${receiver.url}/other-list` });
    const listed = await apiCall(runtime, owner.apiKey, 'GET', '/api/embed/webhooks');
    expect((listed.body.data as WebhookBody[]).map((w) => w.id)).not.toContain(webhook.id);
  });

  it('answers a create retried with the same Idempotency-Key with the same endpoint and secret, leaving one', async () => {
    const url = `${receiver.url}/idempotent-${Date.now()}`;
    const key = { 'Idempotency-Key': `hook-${Date.now()}` };
    const first = await createEndpoint(owner, { url }, key);
    const again = await apiCall(runtime, owner.apiKey, 'POST', '/api/embed/webhooks', { url }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual({ webhook: first.webhook, secret: first.secret });
    const listed = (await apiCall(runtime, owner.apiKey, 'GET', '/api/embed/webhooks')).body
      .data as WebhookBody[];
    expect(listed.filter((w) => w.url === url)).toHaveLength(1);
  });

  it('stores no signing secret in any table, in plain text or as its key bytes', async () => {
    const secrets = [];
    for (let i = 0; i < 3; i++)
      secrets.push((await createEndpoint(owner, { url: `${receiver.url}/scan-${i}` })).secret);
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      for (const key of TABLE_KEYS) {
        const { Items = [] } = await db.send(new ScanCommand({ TableName: runtime.tables[key] }));
        const dump = JSON.stringify(Items);
        for (const secret of secrets) {
          const keyBytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
          for (const form of [
            secret,
            keyBytes.toString('base64'),
            keyBytes.toString('base64url'),
            keyBytes.toString('hex'),
          ]) {
            expect(dump, `${key} holds a secret`).not.toContain(form);
          }
        }
      }
    } finally {
      db.destroy();
    }
  });
});

describe.skipIf(testTarget() === 'assembly')('webhook delivery to a real receiver', () => {
  // Each test has a key owner of its own, so its endpoints receive the events of its own sessions only:
  // real events, from the change feed, as a customer's endpoint receives them.
  let n = 0;
  const freshOwner = () => keyOwner(runtime, `hook-owner-${Date.now()}-${++n}`);
  const bodyOf = (request: { body: string } | undefined) =>
    JSON.parse(request?.body ?? '{}') as { id: string; type: string; data: { session: { id: string } } };

  it('POSTs the event with Standard Webhooks headers that the receiver verifies with its secret', async () => {
    const who = await freshOwner();
    const path = `/verify-${Date.now()}`;
    const { secret } = await createEndpoint(who, {
      url: `${receiver.url}${path}`,
      events: ['session.created'],
    });
    const session = await sessionOf(who);
    const [request] = await receiver.waitFor(1, path);
    const body = bodyOf(request);
    expect(body).toMatchObject({ type: 'session.created', data: { session: { id: session.id } } });
    expect(request?.headers['webhook-id']).toBe(body.id);
    expect(body.id).toMatch(/^evt_/);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(verifiedByReceiver(secret, request as NonNullable<typeof request>)).toBe(true);
    // Another endpoint's secret does not verify it.
    const other = await createEndpoint(who, { url: `${receiver.url}/unrelated`, events: ['session.bound'] });
    expect(verifiedByReceiver(other.secret, request as NonNullable<typeof request>)).toBe(false);
  });

  it('signs with the old and the new secret after a rotation, then with the new one alone after a rotation without overlap', async () => {
    const who = await freshOwner();
    const path = `/rotate-${Date.now()}`;
    const { webhook, secret: old } = await createEndpoint(who, {
      url: `${receiver.url}${path}`,
      events: ['session.created'],
    });
    const rotate = (body?: Record<string, unknown>) =>
      apiCall(runtime, who.apiKey, 'POST', `/api/embed/webhooks/${webhook.id}/rotate-secret`, body);
    const rotated = await rotate();
    expect(rotated.status, rotated.text).toBe(200);
    const fresh = String(rotated.body.secret);
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(fresh).not.toBe(old);
    expect(rotated.body.webhook).toMatchObject({ id: webhook.id });
    // A day of overlap by default.
    const until = Date.parse(String(rotated.body.previousSecretExpiresAt));
    expect(until - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(86_400_000);

    await sessionOf(who);
    const [during] = await receiver.waitFor(1, path);
    const delivered = during as NonNullable<typeof during>;
    expect(String(delivered.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiedByReceiver(old, delivered)).toBe(true);
    expect(verifiedByReceiver(fresh, delivered)).toBe(true);

    const again = await rotate({ overlapSeconds: 0 });
    expect(again.status, again.text).toBe(200);
    const newest = String(again.body.secret);
    await sessionOf(who);
    const [, after] = await receiver.waitFor(2, path);
    const last = after as NonNullable<typeof after>;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifiedByReceiver(newest, last)).toBe(true);
    expect(verifiedByReceiver(fresh, last)).toBe(false);
    expect(verifiedByReceiver(old, last)).toBe(false);
  });

  it('delivers only the types an endpoint subscribes to', async () => {
    const who = await freshOwner();
    const path = `/only-revoked-${Date.now()}`;
    await createEndpoint(who, { url: `${receiver.url}${path}`, events: ['session.revoked'] });
    const session = await sessionOf(who);
    const revoked = await apiCall(runtime, who.apiKey, 'POST', `/api/embed/sessions/${session.id}/revoke`);
    expect(revoked.status).toBe(200);
    // The creation came first and was not sent: the one delivery is the revocation, with its actor.
    const [request] = await receiver.waitFor(1, path);
    expect(bodyOf(request)).toMatchObject({
      type: 'session.revoked',
      data: { session: { id: session.id, status: 'revoked' }, actor: { type: 'api_key', keyId: who.keyId } },
    });
  });

  it('retries a failed delivery with the same webhook-id and body, newly signed', async () => {
    const who = await freshOwner();
    const path = `/${Date.now()}/flaky`;
    const { secret } = await createEndpoint(who, {
      url: `${receiver.url}${path}`,
      events: ['session.created'],
    });
    await sessionOf(who);
    const [first, second] = await receiver.waitFor(2, path);
    expect(first?.headers['webhook-id']).toBe(bodyOf(first).id);
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(second?.body).toBe(first?.body);
    expect(verifiedByReceiver(secret, second as NonNullable<typeof second>)).toBe(true);
  });

  it('delivers nothing of one tenant’s events to another tenant’s endpoint', async () => {
    const [tenantA, tenantB] = [await freshOwner(), await freshOwner()];
    const stamp = Date.now();
    await createEndpoint(tenantB, { url: `${receiver.url}/tenant-b-${stamp}`, events: ['session.created'] });
    await createEndpoint(tenantA, { url: `${receiver.url}/tenant-a-${stamp}`, events: ['session.created'] });
    const aSession = await sessionOf(tenantA);
    await receiver.waitFor(1, `/tenant-a-${stamp}`);
    // B's own event comes after A's was delivered: had A's gone to B too, it would be there first.
    const bSession = await sessionOf(tenantB);
    await receiver.waitFor(1, `/tenant-b-${stamp}`);
    const atB = receiver.received
      .filter((r) => r.path === `/tenant-b-${stamp}`)
      .map((r) => bodyOf(r).data.session.id);
    expect(atB).toEqual([bSession.id]);
    expect(atB).not.toContain(aSession.id);
  });

  it('sends a deleted endpoint nothing more, not even the retries it was owed', async () => {
    const who = await freshOwner();
    const stamp = Date.now();
    // Both fail their first attempt; the sentinel's retry shows when the deleted one's would have come.
    const doomed = await createEndpoint(who, {
      url: `${receiver.url}/${stamp}-doomed/flaky`,
      events: ['session.created'],
    });
    const sentinel = `/${stamp}-sentinel/flaky`;
    await createEndpoint(who, { url: `${receiver.url}${sentinel}`, events: ['session.created'] });
    await sessionOf(who);
    await receiver.waitFor(1, `/${stamp}-doomed/flaky`);
    await receiver.waitFor(1, sentinel);
    expect(
      (await apiCall(runtime, who.apiKey, 'DELETE', `/api/embed/webhooks/${doomed.webhook.id}`)).status,
    ).toBe(204);
    await receiver.waitFor(2, sentinel);
    // A new event reaches the sentinel, and still nothing reaches the deleted endpoint.
    await sessionOf(who);
    await receiver.waitFor(3, sentinel);
    expect(receiver.received.filter((r) => r.path === `/${stamp}-doomed/flaky`)).toHaveLength(1);
  });
});
