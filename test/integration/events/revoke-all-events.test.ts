import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '#admin/cli';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import type { EmbedEvent } from '#lib/domain/events';
import { createSessionAs } from '#test/support/create-session-as';
import {
  adminEnv,
  apiCall,
  type KeyOwnerFixture,
  keyOwner,
  putBoard,
  testTarget,
} from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  verifiedByReceiver,
  type WebhookReceiver,
} from '#test/support/webhook-receiver';

/**
 * Revoke-all told to receivers as one bulk `sessions.revoked` event per call, over HTTP on the local
 * runtime (dynalite, or DynamoDB Local with TEST_DYNAMODB=dynamodb-local): the change feed derives it from
 * the cut-off record the call writes, and a real receiver verifies each delivery with its secret.
 */
const runtime = useTestRuntime();
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

interface RevokedBody {
  id: string;
  type: string;
  occurredAt: string;
  data: { scope: Record<string, string>; cutoff: string; revoked: number; actor: Record<string, string> };
}

const bodyOf = (request: ReceivedWebhook | undefined) => JSON.parse(request?.body ?? '{}') as RevokedBody;
const fresh = (name: string, orgs: string[] = []) => keyOwner(runtime, `${name}-${randomUUID()}`, orgs);

async function endpoint(who: KeyOwnerFixture, path: string, events?: string[]) {
  const result = await apiCall(runtime, who.apiKey, 'POST', '/api/embed/webhooks', {
    url: `${receiver.url}${path}`,
    ...(events ? { events } : {}),
  });
  expect(result.status, result.text).toBe(201);
  return String(result.body.secret);
}

async function createSession(who: KeyOwnerFixture, userId: string, boardId?: string): Promise<string> {
  const { session } = await createSessionAs(runtime, who, { userId, ...(boardId ? { boardId } : {}) });
  return session.id;
}

async function revokeAll(who: KeyOwnerFixture, body: Record<string, string>): Promise<number> {
  const result = await apiCall(runtime, who.apiKey, 'POST', '/api/embed/sessions/revoke', body);
  expect(result.status, result.text).toBe(200);
  return Number(result.body.revoked);
}

const listEvents = async (who: KeyOwnerFixture, query: Record<string, string>) => {
  const page = await apiCall(runtime, who.apiKey, 'GET', `/api/embed/events?${new URLSearchParams(query)}`);
  expect(page.status, page.text).toBe(200);
  return page.body.data as EmbedEvent[];
};

describe.skipIf(testTarget() === 'assembly')('revoke-all delivers one sessions.revoked per call', () => {
  it('a user’s revoke-all reaches the caller’s endpoint once, signed, with the scope, cut-off, count and key', async () => {
    const owner = await fresh('bulk-owner');
    const path = `/bulk-user-${randomUUID()}`;
    const secret = await endpoint(owner, path, ['sessions.revoked']);
    const userId = `customer-${randomUUID()}`;
    await createSession(owner, userId);
    await createSession(owner, userId);

    expect(await revokeAll(owner, { userId })).toBe(2);
    const [request] = await receiver.waitFor(1, path);
    const body = bodyOf(request);
    expect(verifiedByReceiver(secret, request as ReceivedWebhook)).toBe(true);
    expect(request?.headers['webhook-id']).toBe(body.id);
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'sessions.revoked',
      occurredAt: body.data.cutoff,
      data: {
        scope: { userId },
        cutoff: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        revoked: 2,
        actor: { type: 'api_key', keyId: owner.keyId },
      },
    });
    // No token, hash or secret: the body is exactly the fields above.
    expect(request?.body).not.toMatch(/token|hash|secret|whsec_|esk_/i);

    // A second call is a second event, for that call only (nothing left to revoke: 0); the first is
    // never sent again.
    expect(await revokeAll(owner, { userId })).toBe(0);
    const [, again] = await receiver.waitFor(2, path);
    expect(bodyOf(again)).toMatchObject({
      type: 'sessions.revoked',
      data: { scope: { userId }, revoked: 0 },
    });
    expect(bodyOf(again).id).not.toBe(body.id);
    expect(bodyOf(again).data.cutoff > body.data.cutoff).toBe(true);
    await runtime.events?.poll();
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(2);
  });

  it('an endpoint created without events receives it too, and one narrowed to other types does not', async () => {
    const owner = await fresh('bulk-types');
    const stamp = randomUUID();
    await endpoint(owner, `/all-${stamp}`);
    await endpoint(owner, `/created-only-${stamp}`, ['session.created']);
    const userId = `customer-${randomUUID()}`;
    await createSession(owner, userId);
    await receiver.waitFor(1, `/created-only-${stamp}`);
    await revokeAll(owner, { userId });
    // The all-types endpoint gets session.created, then sessions.revoked.
    const atAll = await receiver.waitFor(2, `/all-${stamp}`);
    expect(atAll.map((r) => bodyOf(r).type).sort()).toEqual(['session.created', 'sessions.revoked']);
    expect(
      receiver.received.filter((r) => r.path === `/created-only-${stamp}`).map((r) => bodyOf(r).type),
    ).toEqual(['session.created']);
  });

  it('another tenant’s endpoint receives nothing of it, even for the same external user id', async () => {
    const [tenantA, tenantB] = [await fresh('bulk-a'), await fresh('bulk-b')];
    const stamp = randomUUID();
    await endpoint(tenantA, `/a-${stamp}`, ['sessions.revoked']);
    await endpoint(tenantB, `/b-${stamp}`, ['sessions.revoked']);
    const userId = `customer-${randomUUID()}`;
    await createSession(tenantA, userId);
    await createSession(tenantB, userId);
    expect(await revokeAll(tenantA, { userId })).toBe(1);
    await receiver.waitFor(1, `/a-${stamp}`);
    // B's own call comes after A's was delivered: had A's gone to B too, B would hold two.
    expect(await revokeAll(tenantB, { userId })).toBe(1);
    const [atB] = await receiver.waitFor(1, `/b-${stamp}`);
    await runtime.events?.poll();
    expect(receiver.received.filter((r) => r.path === `/b-${stamp}`)).toHaveLength(1);
    expect(bodyOf(atB).data.actor).toEqual({ type: 'api_key', keyId: tenantB.keyId });
    const atA = receiver.received.filter((r) => r.path === `/a-${stamp}`);
    expect(atA.map((r) => bodyOf(r).data.actor.keyId)).toEqual([tenantA.keyId]);
  });

  it('a board revoke-all by its organization’s member goes to that member only, with every tenant’s count', async () => {
    const orgId = `org-${randomUUID()}`;
    const boardId = `board-${randomUUID()}`;
    await putBoard(runtime, { boardId, orgId, visibility: 'PUBLIC', name: null });
    const member = await fresh('bulk-member', [orgId]);
    const guest = await fresh('bulk-guest');
    const stamp = randomUUID();
    await endpoint(member, `/member-${stamp}`, ['sessions.revoked']);
    await endpoint(guest, `/guest-${stamp}`, ['sessions.revoked', 'session.created']);
    await createSession(member, `customer-${randomUUID()}`, boardId);
    await createSession(guest, `customer-${randomUUID()}`, boardId);
    await receiver.waitFor(1, `/guest-${stamp}`);

    expect(await revokeAll(member, { boardId })).toBe(2);
    const [request] = await receiver.waitFor(1, `/member-${stamp}`);
    expect(bodyOf(request).data).toMatchObject({
      scope: { boardId },
      revoked: 2,
      actor: { type: 'api_key', keyId: member.keyId },
    });
    // The guest tenant's session was revoked, but the organization's call is not its event. Its own
    // revoke-all, made after, is the only bulk event it receives.
    const guestUser = `customer-${randomUUID()}`;
    await createSession(guest, guestUser);
    await receiver.waitFor(2, `/guest-${stamp}`);
    await revokeAll(guest, { userId: guestUser });
    await receiver.waitFor(3, `/guest-${stamp}`);
    await runtime.events?.poll();
    const bulkAtGuest = receiver.received
      .filter((r) => r.path === `/guest-${stamp}` && bodyOf(r).type === 'sessions.revoked')
      .map((r) => bodyOf(r).data.scope);
    expect(bulkAtGuest).toEqual([{ userId: guestUser }]);
  });

  it('the events API lists it by type, and never for a sessionId', async () => {
    const owner = await fresh('bulk-api');
    const path = `/bulk-api-${randomUUID()}`;
    await endpoint(owner, path, ['sessions.revoked']);
    const userId = `customer-${randomUUID()}`;
    const sessionId = await createSession(owner, userId);
    await revokeAll(owner, { userId, boardId: String(runtime.demo?.publicBoardId) });
    const [request] = await receiver.waitFor(1, path);

    const listed = await listEvents(owner, { type: 'sessions.revoked' });
    expect(listed).toEqual([bodyOf(request)]);
    expect(listed[0]).toMatchObject({
      data: { scope: { userId, boardId: runtime.demo?.publicBoardId }, revoked: 1 },
    });
    const all = await listEvents(owner, {});
    expect(all.map((e) => e.type)).toContain('sessions.revoked');
    const ofSession = await listEvents(owner, { sessionId });
    expect(ofSession.map((e) => e.type)).not.toContain('sessions.revoked');
    expect(ofSession.map((e) => e.type)).toContain('session.created');
    // Another tenant lists none of it.
    const other = await fresh('bulk-api-other');
    expect(await listEvents(other, { type: 'sessions.revoked' })).toEqual([]);
  });

  it('an operator’s revoke-all is recorded as the operator’s, for no tenant: no endpoint, no events API', async () => {
    const owner = await fresh('bulk-operator');
    const stamp = randomUUID();
    await endpoint(owner, `/operator-${stamp}`);
    const userId = `customer-${randomUUID()}`;
    await createSession(owner, userId);
    await receiver.waitFor(1, `/operator-${stamp}`);
    const result = (await runAdmin(
      ['revoke-all-sessions', '--before', new Date().toISOString(), '--user', userId],
      adminEnv(runtime),
    )) as { revoked: number; cutoff: string };
    expect(result.revoked).toBe(1);

    await runtime.events?.poll();
    const mine = (await storedBulkEvents()).filter((e) => e.event.data.scope.userId === userId);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.ownerUserId).toBeUndefined();
    expect(mine[0]?.event).toMatchObject({
      type: 'sessions.revoked',
      data: { scope: { userId }, cutoff: result.cutoff, revoked: 1, actor: { type: 'operator' } },
    });
    // The owner's own revoke-all after it is the only bulk event its endpoint receives.
    await createSession(owner, userId);
    await revokeAll(owner, { userId });
    // session.created twice, then the owner's call: the operator's added nothing in between.
    const received = await receiver.waitFor(3, `/operator-${stamp}`);
    await runtime.events?.poll();
    expect(
      receiver.received
        .filter((r) => r.path === `/operator-${stamp}` && bodyOf(r).type === 'sessions.revoked')
        .map((r) => bodyOf(r).data.actor.type),
    ).toEqual(['api_key']);
    expect(received).toHaveLength(3);
    expect((await listEvents(owner, { type: 'sessions.revoked' })).map((e) => e.id)).not.toContain(
      mine[0]?.event.id,
    );
  });
});

/** The `sessions.revoked` events in the events table, with the owner they are stored under. */
async function storedBulkEvents(): Promise<
  Array<{ ownerUserId: string | undefined; event: RevokedBody & { type: 'sessions.revoked' } }>
> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    const { Items = [] } = await db.send(new ScanCommand({ TableName: runtime.tables.events }));
    return Items.filter((item) => item.type === 'sessions.revoked').map((item) => ({
      ownerUserId: typeof item.ownerUserId === 'string' ? item.ownerUserId : undefined,
      event: JSON.parse(String(item.event)),
    }));
  } finally {
    db.destroy();
  }
}
