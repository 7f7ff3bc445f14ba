import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_KEYS } from '#lib/definitions/tables';
import type { SessionView } from '#lib/domain/session';
import { createDocumentClient } from '#lib/dynamodb/client';
import type { LocalRuntime } from '#local/runtime';
import { validBody } from '#test/support/fixtures';
import {
  apiCall,
  type KeyOwnerFixture,
  keyOwner,
  startTestRuntime,
  testTarget,
} from '#test/support/local-runtime';
import {
  routedEvent,
  startWebhookReceiver,
  verifiedByReceiver,
  type WebhookReceiver,
} from '#test/support/webhook-receiver';

/**
 * Webhook endpoints over HTTP on the local runtime, and delivery to a real receiver: the runtime's sink is
 * given events as the change feed would give them (routedEvent), and the receiver verifies each request
 * as a customer's server would. Retries follow WEBHOOK_RETRY_SECONDS (the local default, 1,2,4).
 */
let runtime: LocalRuntime;
let owner: KeyOwnerFixture;
let otherTenant: KeyOwnerFixture;
let receiver: WebhookReceiver;

beforeAll(async () => {
  runtime = await startTestRuntime();
  const demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
  owner = { userId: demo.userId, keyId: demo.keyId, apiKey: demo.apiKey };
  otherTenant = await keyOwner(runtime, 'hook-other-tenant');
  // Fails the first request to any path ending in /flaky, answers 200 otherwise.
  receiver = await startWebhookReceiver((request, nth) =>
    request.path.endsWith('/flaky') && nth === 1 ? 500 : 200,
  );
});
afterAll(async () => {
  await runtime?.close();
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

async function sessionOf(who: KeyOwnerFixture): Promise<SessionView> {
  const demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
  const created = await apiCall(
    runtime,
    who.apiKey,
    'POST',
    '/api/embed/sessions',
    validBody({ boardId: demo.publicBoardId }),
  );
  expect(created.status, created.text).toBe(201);
  const id = (created.body.session as { id: string }).id;
  return (await apiCall(runtime, who.apiKey, 'GET', `/api/embed/sessions/${id}`)).body.session as SessionView;
}

const sink = () => {
  const [first] = runtime.eventSinks;
  if (!first) throw new Error('the runtime has no event sink');
  return first;
};

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

  it('deletes an endpoint with 204; deleting it again, or another owner’s, is a 404', async () => {
    const { webhook } = await createEndpoint(owner, { url: `${receiver.url}/delete-me` });
    const byOther = await apiCall(runtime, otherTenant.apiKey, 'DELETE', `/api/embed/webhooks/${webhook.id}`);
    expect(byOther.status).toBe(404);
    expect(byOther.body).toEqual({ error: 'Not Found', message: expect.any(String) });
    const deleted = await apiCall(runtime, owner.apiKey, 'DELETE', `/api/embed/webhooks/${webhook.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await apiCall(runtime, owner.apiKey, 'DELETE', `/api/embed/webhooks/${webhook.id}`)).status).toBe(
      404,
    );
    expect((await apiCall(runtime, owner.apiKey, 'DELETE', '/api/embed/webhooks/not-an-id')).status).toBe(
      404,
    );
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
  it('POSTs the event with Standard Webhooks headers that the receiver verifies with its secret', async () => {
    const path = `/verify-${Date.now()}`;
    const { secret } = await createEndpoint(owner, {
      url: `${receiver.url}${path}`,
      events: ['session.created'],
    });
    const session = await sessionOf(owner);
    const routed = routedEvent(session, 'session.created', owner);
    await sink().publish([routed]);
    const [request] = await receiver.waitFor(1, path);
    expect(request?.headers['webhook-id']).toBe(routed.event.id);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual(routed.event);
    expect(verifiedByReceiver(secret, request as NonNullable<typeof request>)).toBe(true);
    // Another endpoint's secret does not verify it.
    const other = await createEndpoint(owner, {
      url: `${receiver.url}/unrelated`,
      events: ['session.bound'],
    });
    expect(verifiedByReceiver(other.secret, request as NonNullable<typeof request>)).toBe(false);
  });

  it('delivers only the types an endpoint subscribes to', async () => {
    const path = `/only-revoked-${Date.now()}`;
    await createEndpoint(owner, { url: `${receiver.url}${path}`, events: ['session.revoked'] });
    const session = await sessionOf(owner);
    await sink().publish([
      routedEvent(session, 'session.opened', owner),
      routedEvent(session, 'session.revoked', owner),
    ]);
    await receiver.waitFor(1, path);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const types = receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body).type);
    expect(types).toEqual(['session.revoked']);
  });

  it('retries a failed delivery with the same webhook-id and body, newly signed', async () => {
    const path = `/${Date.now()}/flaky`;
    const { secret } = await createEndpoint(owner, { url: `${receiver.url}${path}` });
    const routed = routedEvent(await sessionOf(owner), 'session.revoked', owner, { type: 'operator' });
    await sink().publish([routed]);
    const [first, second] = await receiver.waitFor(2, path);
    expect(first?.headers['webhook-id']).toBe(routed.event.id);
    expect(second?.headers['webhook-id']).toBe(routed.event.id);
    expect(second?.body).toBe(first?.body);
    expect(verifiedByReceiver(secret, second as NonNullable<typeof second>)).toBe(true);
  });

  it('delivers nothing of one tenant’s events to another tenant’s endpoint', async () => {
    const stamp = Date.now();
    await createEndpoint(otherTenant, { url: `${receiver.url}/tenant-b-${stamp}` });
    await createEndpoint(owner, { url: `${receiver.url}/tenant-a-${stamp}` });
    const ownersSession = await sessionOf(owner);
    const othersSession = await sessionOf(otherTenant);
    await sink().publish([routedEvent(ownersSession, 'session.created', owner)]);
    await receiver.waitFor(1, `/tenant-a-${stamp}`);
    // The other tenant's own event arrives after the first one was handed out: nothing else came before it.
    await sink().publish([routedEvent(othersSession, 'session.created', otherTenant)]);
    const atOther = await receiver.waitFor(1, `/tenant-b-${stamp}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(
      receiver.received
        .filter((r) => r.path === `/tenant-b-${stamp}`)
        .map((r) => JSON.parse(r.body).data.session.id),
    ).toEqual([othersSession.id]);
    expect(atOther).toHaveLength(1);
  });

  it('sends a deleted endpoint nothing more, not even the retries it was owed', async () => {
    const stamp = Date.now();
    // Both fail their first attempt; the sentinel's retry shows when the deleted one's would have come.
    const doomed = await createEndpoint(owner, { url: `${receiver.url}/${stamp}-doomed/flaky` });
    await createEndpoint(owner, { url: `${receiver.url}/${stamp}-sentinel/flaky` });
    await sink().publish([routedEvent(await sessionOf(owner), 'session.revoked', owner)]);
    await receiver.waitFor(1, `/${stamp}-doomed/flaky`);
    await receiver.waitFor(1, `/${stamp}-sentinel/flaky`);
    expect(
      (await apiCall(runtime, owner.apiKey, 'DELETE', `/api/embed/webhooks/${doomed.webhook.id}`)).status,
    ).toBe(204);
    await receiver.waitFor(2, `/${stamp}-sentinel/flaky`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.filter((r) => r.path === `/${stamp}-doomed/flaky`)).toHaveLength(1);
    await sink().publish([routedEvent(await sessionOf(owner), 'session.created', owner)]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.filter((r) => r.path === `/${stamp}-doomed/flaky`)).toHaveLength(1);
  });
});
