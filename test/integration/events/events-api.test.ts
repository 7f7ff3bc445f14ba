import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { SessionEvent } from '#lib/domain/events';
import { validBody } from '#test/support/fixtures';
import {
  apiCall,
  type CallResult,
  call,
  type KeyOwnerFixture,
  keyOwner,
  storeSession,
} from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The session events over HTTP on the local runtime: its change feed derives them from the sessions table
 * as the stream consumer does on AWS, and GET /api/embed/events shows them to the tenant that created the
 * session, and to no one else.
 */
const runtime = useTestRuntime();
let demo: KeyOwnerFixture;
let other: KeyOwnerFixture;

beforeAll(async () => {
  demo = {
    userId: String(runtime.demo?.userId),
    keyId: String(runtime.demo?.keyId),
    apiKey: String(runtime.demo?.apiKey),
  };
  other = await keyOwner(runtime, `tenant-${randomUUID()}`);
});

const events = (who: KeyOwnerFixture, query: Record<string, string> = {}) =>
  apiCall(runtime, who.apiKey, 'GET', `/api/embed/events?${new URLSearchParams(query)}`);

async function createSession(who: KeyOwnerFixture, body: Record<string, unknown> = {}): Promise<string> {
  const created = await apiCall(runtime, who.apiKey, 'POST', '/api/embed/sessions', {
    ...validBody({ boardId: runtime.demo?.publicBoardId, userId: `user-${randomUUID()}` }),
    ...body,
  });
  expect(created.status, created.text).toBe(201);
  return String((created.body.session as { id: string }).id);
}

/** The session's events once `types` are all there (the feed reads the table every half second). */
async function eventsOnceThere(
  who: KeyOwnerFixture,
  sessionId: string,
  types: string[],
  within = 10_000,
): Promise<SessionEvent[]> {
  return vi.waitFor(
    async () => {
      await runtime.events?.poll();
      const page = await events(who, { sessionId });
      expect(page.status, page.text).toBe(200);
      const data = page.body.data as SessionEvent[];
      expect(data.map((event) => event.type)).toEqual(expect.arrayContaining(types));
      return data;
    },
    { timeout: within, interval: 200 },
  );
}

describe('GET /api/embed/events', () => {
  it('shows a created session’s session.created, with the session as GET shows it, and no secret', async () => {
    const id = await createSession(demo, { bindToBrowser: true });
    const [created, ...rest] = await eventsOnceThere(demo, id, ['session.created']);
    expect(rest).toEqual([]);
    expect(created).toMatchObject({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'session.created',
      sequence: 1,
      data: {
        actor: { type: 'api_key', keyId: demo.keyId },
        session: { id, status: 'active', bindToBrowser: true },
      },
    });
    const got = await apiCall(runtime, demo.apiKey, 'GET', `/api/embed/sessions/${id}`);
    expect(created?.data.session).toEqual(got.body.session);
    expect(JSON.stringify(created)).not.toMatch(/token|hash|secret/i);
  });

  it('shows a revoke with its actor: the creator’s key, or the board’s organization for another tenant’s session', async () => {
    const own = await createSession(demo);
    await apiCall(runtime, demo.apiKey, 'POST', `/api/embed/sessions/${own}/revoke`);
    const ownEvents = await eventsOnceThere(demo, own, ['session.created', 'session.revoked']);
    expect(ownEvents.map((e) => e.type)).toEqual(['session.revoked', 'session.created']);
    expect(ownEvents[0]?.data.actor).toEqual({ type: 'api_key', keyId: demo.keyId });
    expect(ownEvents[0]?.sequence).toBeGreaterThan(ownEvents[1]?.sequence ?? Infinity);

    // Another tenant's session on the demo organization's public board, revoked by that organization.
    const theirs = await createSession(other);
    const revoked = await apiCall(runtime, demo.apiKey, 'POST', `/api/embed/sessions/${theirs}/revoke`);
    expect(revoked.status, revoked.text).toBe(200);
    const theirEvents = await eventsOnceThere(other, theirs, ['session.revoked']);
    expect(theirEvents.find((e) => e.type === 'session.revoked')?.data.actor).toEqual({
      type: 'board_organization',
    });
  });

  it('shows exactly one session.opened however many times, and however concurrently, the page loads', async () => {
    const created = await apiCall(runtime, demo.apiKey, 'POST', '/api/embed/sessions', {
      ...validBody({ boardId: runtime.demo?.publicBoardId, userId: `user-${randomUUID()}` }),
    });
    const id = String((created.body.session as { id: string }).id);
    const token = String(created.body.sessionToken);
    const load = () => call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
    const first = await Promise.all(Array.from({ length: 5 }, load));
    expect(first.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    await runtime.events?.poll();
    for (let i = 0; i < 3; i++) expect((await load()).status).toBe(200);
    const found = await eventsOnceThere(demo, id, ['session.created', 'session.opened']);
    expect(found.map((e) => e.type)).toEqual(['session.opened', 'session.created']);
    expect(found[0]).toMatchObject({ sequence: 3, data: { session: { id, status: 'active' } } });
  });

  it('never shows a tenant another tenant’s events, even by session id', async () => {
    const theirs = await createSession(other);
    await eventsOnceThere(other, theirs, ['session.created']);
    const asked = await events(demo, { sessionId: theirs });
    expect(asked.status).toBe(200);
    expect(asked.body.data).toEqual([]);
    const all = await collect(demo, {});
    expect(all.filter((e) => e.data.session.id === theirs)).toEqual([]);
  });

  it('pages newest first, by type, through every event and each once', async () => {
    const owner = await keyOwner(runtime, `pager-${randomUUID()}`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createSession(owner));
    await eventsOnceThere(owner, ids[4] as string, ['session.created']);
    await apiCall(runtime, owner.apiKey, 'POST', `/api/embed/sessions/${ids[0]}/revoke`);
    await eventsOnceThere(owner, ids[0] as string, ['session.revoked']);

    const all = await collect(owner, { limit: '2' });
    expect(all).toHaveLength(6);
    expect(new Set(all.map((e) => e.id)).size).toBe(6);
    const positions = all.map((e) => `${e.occurredAt}#${e.id}`);
    expect(positions).toEqual([...positions].sort().reverse());

    const created = await collect(owner, { type: 'session.created', limit: '2' });
    expect(created.map((e) => e.data.session.id).sort()).toEqual([...ids].sort());
  });

  it('refuses a bad limit, an unknown type, and a cursor altered or issued for another query', async () => {
    for (const query of [
      { limit: '0' },
      { limit: '101' },
      { limit: 'x' },
      { type: 'session.deleted' },
      { foo: '1' },
    ] as Record<string, string>[]) {
      const answer = await events(demo, query);
      expect(answer.status, JSON.stringify(query)).toBe(400);
      expect(answer.body).toMatchObject({ error: 'Bad Request', message: expect.any(String) });
    }
    for (let i = 0; i < 2; i++) await createSession(demo);
    await runtime.events?.poll();
    const first = await events(demo, { limit: '1' });
    const cursor = String(first.body.nextCursor);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect((await events(demo, { limit: '1', cursor })).status).toBe(200);
    expect((await events(demo, { limit: '1', cursor: `${cursor}x` })).status).toBe(400);
    expect((await events(demo, { limit: '1', cursor, type: 'session.created' })).status).toBe(400);
    expect((await events(other, { limit: '1', cursor })).status).toBe(400);
  });

  it('session.expired arrives within 10 seconds of expiresAt', async () => {
    const expiresAt = new Date(Date.now() + 1_500).toISOString();
    await storeSession(runtime, `expiring-${randomUUID()}`, {
      boardId: String(runtime.demo?.publicBoardId),
      expiresAt,
      createdByUserId: demo.userId,
    });
    const id = await findSessionIdExpiringAt(expiresAt);
    const found = await eventsOnceThere(demo, id, ['session.expired'], 15_000);
    const expired = found.find((e) => e.type === 'session.expired');
    expect(expired).toMatchObject({ occurredAt: expiresAt, data: { session: { status: 'expired' } } });
  });
});

async function collect(who: KeyOwnerFixture, query: Record<string, string>): Promise<SessionEvent[]> {
  const all: SessionEvent[] = [];
  let cursor: string | null = null;
  do {
    const page: CallResult = await events(who, { ...query, ...(cursor ? { cursor } : {}) });
    expect(page.status, page.text).toBe(200);
    all.push(...(page.body.data as SessionEvent[]));
    cursor = page.body.nextCursor as string | null;
  } while (cursor);
  return all;
}

function findSessionIdExpiringAt(expiresAt: string): Promise<string> {
  return vi.waitFor(
    async () => {
      await runtime.events?.poll();
      const page = await events(demo, { type: 'session.created', limit: '100' });
      const match = (page.body.data as SessionEvent[]).find((e) => e.data.session.expiresAt === expiresAt);
      if (!match) throw new Error('the stored session never appeared in the events');
      return match.data.session.id;
    },
    { timeout: 5_000, interval: 100 },
  );
}
