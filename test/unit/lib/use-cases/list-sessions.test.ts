import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '#lib/domain/errors';
import { type StoredSession, toSessionView } from '#lib/domain/session';
import {
  decodeCursor,
  encodeCursor,
  type ListCaller,
  type ListSessionsQuery,
  listSessions,
  MAX_EXAMINED_PER_PAGE,
  MAX_PAGE_BYTES,
  MAX_STATE_READS_PER_PAGE,
  viewBytesAtMost,
} from '#lib/use-cases/list-sessions';
import { FakeBoards, FakeMemberships, FakeSessions, fixedClock } from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

const NOW = '2026-03-01T00:00:00.000Z';
const CALLER: ListCaller = { userId: 'owner-1', keyId: 'key_1', apiKey: `esk_${'c'.repeat(43)}` };
const BOARDS = [
  { boardId: 'board-a', orgId: 'org-a', visibility: 'PRIVATE', name: null },
  { boardId: 'board-b', orgId: 'org-b', visibility: 'PUBLIC', name: null },
];

let seq = 0;
/** A session created `minutes` after midnight, in org-a on board-a by a colleague (a member of org-a). */
function session(minutes: number, overrides: Partial<StoredSession> = {}): StoredSession {
  seq += 1;
  return storedSession({
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    boardId: 'board-a',
    orgId: 'org-a',
    userId: 'customer-1',
    createdByUserId: 'colleague',
    createdAt: new Date(Date.UTC(2026, 1, 1, 0, minutes)).toISOString(),
    expiresAt: '2026-12-31T00:00:00.000Z',
    ...overrides,
  });
}

function setup(sessions: StoredSession[], members: Array<{ orgId: string; userId: string }> = []) {
  return {
    sessions: new FakeSessions(sessions),
    boards: new FakeBoards(BOARDS),
    memberships: new FakeMemberships([...members, { orgId: 'org-a', userId: 'colleague' }]),
    clock: fixedClock(NOW),
  };
}

const query = (overrides: Partial<ListSessionsQuery> = {}): ListSessionsQuery => ({
  userId: 'customer-1',
  limit: 20,
  ...overrides,
});

async function allPages(deps: ReturnType<typeof setup>, q: ListSessionsQuery, caller = CALLER) {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listSessions(deps, caller, { ...q, ...(cursor ? { cursor } : {}) });
    ids.push(...page.data.map((s) => s.id));
    if (page.nextCursor === null) return ids;
    cursor = page.nextCursor;
  }
}

describe('listSessions: what a caller sees', () => {
  it('merges the caller’s organizations and the sessions it created, newest first, each once', async () => {
    const inOrg = session(1);
    const createdElsewhere = session(2, { boardId: 'board-b', orgId: 'org-b', createdByUserId: 'owner-1' });
    const createdInOrg = session(3, { createdByUserId: 'owner-1' });
    const foreign = session(4, { boardId: 'board-b', orgId: 'org-b' });
    const deps = setup(
      [inOrg, createdElsewhere, createdInOrg, foreign],
      [{ orgId: 'org-a', userId: 'owner-1' }],
    );
    const page = await listSessions(deps, CALLER, query());
    expect(page.data.map((s) => s.id)).toEqual([createdInOrg.id, createdElsewhere.id, inOrg.id]);
    expect(page.nextCursor).toBeNull();
  });

  it('shows a board’s sessions to a member of its organization, and only its own to anyone else', async () => {
    const mine = session(1, { createdByUserId: 'owner-1', boardId: 'board-b', orgId: 'org-b' });
    const theirs = session(2, { boardId: 'board-b', orgId: 'org-b' });
    const asOutsider = setup([mine, theirs]);
    expect(
      (await listSessions(asOutsider, CALLER, { boardId: 'board-b', limit: 20 })).data.map((s) => s.id),
    ).toEqual([mine.id]);
    const asMember = setup([mine, theirs], [{ orgId: 'org-b', userId: 'owner-1' }]);
    expect(
      (await listSessions(asMember, CALLER, { boardId: 'board-b', limit: 20 })).data.map((s) => s.id),
    ).toEqual([theirs.id, mine.id]);
    expect(asMember.sessions.calls).toContain('scopePartition:board');
    expect(asOutsider.sessions.calls).toContain('scopePartition:creatorBoard');
  });

  it('narrows a user’s sessions to one board when both are given', async () => {
    const onA = session(1);
    const onB = session(2, { boardId: 'board-x' });
    const deps = setup([onA, onB], [{ orgId: 'org-a', userId: 'owner-1' }]);
    expect((await listSessions(deps, CALLER, query({ boardId: 'board-a' }))).data.map((s) => s.id)).toEqual([
      onA.id,
    ]);
  });

  it('computes each status when read and filters by it', async () => {
    const active = session(1);
    const expired = session(2, { expiresAt: NOW });
    const revoked = session(3, { revokedAt: '2026-02-15T00:00:00.000Z', revokedByUserId: 'x' });
    const deps = setup([active, expired, revoked], [{ orgId: 'org-a', userId: 'owner-1' }]);
    const statuses = (await listSessions(deps, CALLER, query())).data.map((s) => [s.id, s.status]);
    expect(statuses).toEqual([
      [revoked.id, 'revoked'],
      [expired.id, 'expired'],
      [active.id, 'active'],
    ]);
    for (const status of ['active', 'expired', 'revoked'] as const) {
      const page = await listSessions(deps, CALLER, query({ status }));
      expect(page.data.map((s) => s.status)).toEqual([status]);
    }
  });

  it('never carries the token hash, nor who created the session', async () => {
    const deps = setup([session(1)], [{ orgId: 'org-a', userId: 'owner-1' }]);
    const text = JSON.stringify(await listSessions(deps, CALLER, query()));
    expect(text).not.toContain('tokenHash');
    expect(text).not.toContain('createdBy');
    expect(text).not.toContain('a'.repeat(64));
  });
});

describe('listSessions: pages', () => {
  it('pages with a cursor that neither repeats nor skips, ending with a null cursor', async () => {
    const made = Array.from({ length: 7 }, (_, i) => session(i));
    const deps = setup(made, [{ orgId: 'org-a', userId: 'owner-1' }]);
    const first = await listSessions(deps, CALLER, query({ limit: 3 }));
    expect(first.data).toHaveLength(3);
    expect(first.nextCursor).not.toBeNull();
    expect(await allPages(deps, query({ limit: 3 }))).toEqual(made.map((s) => s.id).reverse());
  });

  it('gives the last full page a null cursor when nothing follows it', async () => {
    const deps = setup([session(1), session(2)], [{ orgId: 'org-a', userId: 'owner-1' }]);
    expect((await listSessions(deps, CALLER, query({ limit: 2 }))).nextCursor).toBeNull();
  });

  it('orders sessions created in the same millisecond by id, so a page boundary between them is exact', async () => {
    const twins = [session(5), session(5), session(5)];
    const deps = setup(twins, [{ orgId: 'org-a', userId: 'owner-1' }]);
    expect(await allPages(deps, query({ limit: 1 }))).toEqual(
      twins
        .map((s) => s.id)
        .sort()
        .reverse(),
    );
  });

  it(`stops a page after examining ${MAX_EXAMINED_PER_PAGE} sessions of another status, with a cursor to go on`, async () => {
    const revoked = Array.from({ length: MAX_EXAMINED_PER_PAGE + 5 }, (_, i) =>
      session(100 + i, { revokedAt: NOW, revokedByUserId: 'x' }),
    );
    const active = session(1);
    const deps = setup([active, ...revoked], [{ orgId: 'org-a', userId: 'owner-1' }]);
    const first = await listSessions(deps, CALLER, query({ status: 'active', limit: 100 }));
    expect(first.data).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    const second = await listSessions(
      deps,
      CALLER,
      query({ status: 'active', limit: 100, cursor: first.nextCursor ?? '' }),
    );
    expect(second.data.map((s) => s.id)).toEqual([active.id]);
    expect(second.nextCursor).toBeNull();
  });
});

describe('list cursors', () => {
  const q = query({ status: 'active' });
  const position = '2026-02-01T00:05:00.000Z#00000000-0000-4000-8000-000000000007';

  it('round-trips a position for the same API key and query, whatever the page size', () => {
    const cursor = encodeCursor(position, CALLER, q);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, CALLER, { ...q, limit: 5 })).toBe(position);
  });

  it.each([
    ['another key owner', { ...CALLER, userId: 'owner-2' }, q],
    ['another API key of the same owner', { ...CALLER, apiKey: `esk_${'d'.repeat(43)}` }, q],
    ['another user', CALLER, { ...q, userId: 'customer-2' }],
    ['another board', CALLER, { ...q, boardId: 'board-a' }],
    ['another status', CALLER, { ...q, status: 'revoked' as const }],
  ])('refuses a cursor used by %s', (_label, caller, other) => {
    const cursor = encodeCursor(position, CALLER, q);
    expect(() => decodeCursor(cursor, caller, other)).toThrow(ValidationError);
  });

  it('refuses a well-formed cursor whose position was changed, even to another valid position', () => {
    const [, mac] = encodeCursor(position, CALLER, q).split('.');
    const forged = Buffer.from(
      JSON.stringify({ v: 2, p: '9999-12-31T23:59:59.999Z#ffffffff-ffff-4fff-bfff-ffffffffffff' }),
    ).toString('base64url');
    expect(() => decodeCursor(`${forged}.${mac}`, CALLER, q)).toThrow(
      'cursor is invalid or was issued for another query',
    );
  });

  it('refuses a cursor that is not exactly the canonical spelling of what it decodes to', () => {
    const cursor = encodeCursor(position, CALLER, q);
    const [payload, mac] = cursor.split('.') as [string, string];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // 32 bytes take 43 characters, whose last carries 2 unused bits: flipping one keeps the bytes.
    const respelled = `${mac.slice(0, -1)}${alphabet[alphabet.indexOf(mac.slice(-1)) ^ 1]}`;
    expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    for (const variant of [`${payload}.${respelled}`, `${payload}.${mac}=`, `${payload}==.${mac}`]) {
      expect(() => decodeCursor(variant, CALLER, q)).toThrow(
        'cursor is invalid or was issued for another query',
      );
    }
  });

  it.each([
    ['not base64url', 'a b.c'],
    ['without a signature', Buffer.from('{}').toString('base64url')],
    ['in three parts', 'a.b.c'],
    ['signed but not JSON', 'SIGNED:{'],
    ['signed but of another version', 'SIGNED:{"v":1,"p":"P"}'],
    ['signed with an extra field', 'SIGNED:{"v":2,"p":"P","more":1}'],
    ['signed with a position of the wrong shape', 'SIGNED:{"v":2,"p":"zzz"}'],
  ])('refuses a cursor %s', (_label, raw) => {
    let cursor = raw;
    if (raw.startsWith('SIGNED:')) {
      // Sign an arbitrary payload as the service would, to reach the checks behind the signature.
      const payload = Buffer.from(raw.slice('SIGNED:'.length).replace('P', position)).toString('base64url');
      const genuine = encodeCursor(position, CALLER, q);
      const [genuinePayload] = genuine.split('.');
      cursor = genuine.replace(`${genuinePayload}.`, `${payload}.`);
      cursor = `${payload}.${signWith(payload)}`;
    }
    expect(() => decodeCursor(cursor, CALLER, q)).toThrow(
      'cursor is invalid or was issued for another query',
    );
  });

  /** The service's signature over `payload` for CALLER and q, computed as list-sessions.ts does. */
  function signWith(payload: string): string {
    const key = Buffer.from(
      hkdfSync('sha256', CALLER.apiKey, 'list-cursor', 'embed-session list cursor v2', 32),
    );
    return createHmac('sha256', key)
      .update(payload)
      .update('\u0000')
      .update(JSON.stringify([CALLER.userId, q.userId ?? null, q.boardId ?? null, q.status ?? null]))
      .digest('base64url');
  }
});

describe('listSessions: bounded cost', () => {
  it('reads at most 100 sessions per batch when a filter may skip them, whatever the limit', async () => {
    const active = Array.from({ length: 1_200 }, (_, i) => session(i));
    const deps = setup(active, [{ orgId: 'org-a', userId: 'owner-1' }]);
    const page = await listSessions(deps, CALLER, query({ status: 'revoked', limit: 1 }));
    expect(page.data).toEqual([]);
    expect(page.nextCursor).not.toBeNull();
    const getMany = deps.sessions.calls.filter((call) => call === 'getMany').length;
    const scans = deps.sessions.calls.filter((call) => call.startsWith('scopePartition')).length;
    expect(getMany).toBeLessThanOrEqual(Math.ceil(MAX_EXAMINED_PER_PAGE / 100));
    expect(scans).toBeLessThanOrEqual(2 * Math.ceil(MAX_EXAMINED_PER_PAGE / 100) + 2);
  });

  it('reads from each scope only what the page needs while no session is filtered out', async () => {
    const many = Array.from({ length: 50 }, (_, i) => session(i));
    const deps = setup(many, [{ orgId: 'org-a', userId: 'owner-1' }]);
    const page = await listSessions(deps, CALLER, query({ limit: 20 }));
    expect(page.data).toHaveLength(20);
    // The page and one more, to know whether another page follows.
    expect(deps.sessions.scanLimits).toEqual([21, 21]);
    expect(deps.sessions.calls.filter((call) => call === 'getMany')).toHaveLength(1);
  });

  it('reads 100 at a time once the tenant filter drops a session, so other tenants cost few reads', async () => {
    // 300 newer sessions other tenants made for the same external user on org-a's public board.
    const theirs = Array.from({ length: 300 }, (_, i) => session(100 + i, { createdByUserId: 'stranger' }));
    const ours = Array.from({ length: 5 }, (_, i) => session(i));
    const deps = setup([...ours, ...theirs], [{ orgId: 'org-a', userId: 'owner-1' }]);
    const page = await listSessions(deps, CALLER, query({ limit: 20 }));
    expect(page.data.map((s) => s.id)).toEqual(ours.map((s) => s.id).reverse());
    expect(deps.sessions.scanLimits.slice(0, 2)).toEqual([21, 21]);
    expect(new Set(deps.sessions.scanLimits.slice(2))).toEqual(new Set([100]));
    expect(deps.sessions.scanLimits.length).toBeLessThanOrEqual(2 + 2 * Math.ceil(305 / 100) + 2);
  });

  it('stops a page before its JSON passes 4 MiB, with a cursor to go on, and never repeats or skips', async () => {
    const big = { blob: 'x'.repeat(300 * 1024) };
    const many = Array.from({ length: 30 }, (_, i) => session(i, { metadata: big }));
    const deps = setup(many, [{ orgId: 'org-a', userId: 'owner-1' }]);
    const first = await listSessions(deps, CALLER, query({ limit: 100 }));
    expect(Buffer.byteLength(JSON.stringify(first))).toBeLessThan(MAX_PAGE_BYTES + 1024);
    expect(first.data.length).toBeGreaterThan(0);
    expect(first.data.length).toBeLessThan(30);
    expect(first.nextCursor).not.toBeNull();
    expect(await allPages(deps, query({ limit: 100 }))).toEqual(many.map((s) => s.id).reverse());
  });
});

describe('viewBytesAtMost (the page cap’s measure of a session)', () => {
  const exact = (view: unknown) => Buffer.byteLength(JSON.stringify(view));
  const at = new Date(NOW);

  it.each([
    ['plain ASCII', 'a'],
    ['control characters, escaped as \\u00XX (6 bytes each)', '\u0001\u001f'],
    ['quotes and backslashes', '"\\'],
    ['non-ASCII text (3 bytes each in UTF-8)', 'é€漢'],
    ['emoji (a surrogate pair, 4 bytes)', '😀'],
    ['lone surrogates, escaped', '\ud800\udfff'],
  ])('is never below the exact JSON size of a session whose strings are %s', (_kind, unit) => {
    const long = unit.repeat(200);
    const view = toSessionView(
      session(1, {
        userId: long,
        email: long,
        firstName: long,
        lastName: long,
        avatarUrl: long,
        plan: long,
        metadata: { [long]: [long, 1.5e300, null, true, { nested: long }] },
        revokedAt: '2026-02-01T00:00:00.000Z',
        boundAt: '2026-02-01T00:00:00.000Z',
      }),
      at,
    );
    expect(viewBytesAtMost(view)).toBeGreaterThanOrEqual(exact(view));
  });

  it('is never below the exact size of a session with every optional field null', () => {
    const view = toSessionView(
      session(1, { firstName: null, lastName: null, avatarUrl: null, plan: null, metadata: {} }),
      at,
    );
    expect(viewBytesAtMost(view)).toBeGreaterThanOrEqual(exact(view));
  });

  it('counts metadata exactly, so a page of large metadata holds as much as fits', () => {
    const small = toSessionView(session(1, { metadata: {} }), at);
    const big = toSessionView(session(1, { metadata: { blob: 'x'.repeat(100_000) } }), at);
    expect(viewBytesAtMost(big) - viewBytesAtMost(small)).toBe(exact(big.metadata) - exact(small.metadata));
  });
});

describe('listSessions: one tenant’s external user ids', () => {
  it('looks up each creator’s membership once per page, however many of its sessions the page holds', async () => {
    const byColleague = Array.from({ length: 10 }, (_, i) => session(i, { createdByUserId: 'colleague' }));
    const byStranger = Array.from({ length: 10 }, (_, i) => session(20 + i, { createdByUserId: 'stranger' }));
    const deps = setup([...byColleague, ...byStranger], [{ orgId: 'org-a', userId: 'owner-1' }]);
    const page = await listSessions(deps, CALLER, query({ limit: 50 }));
    expect(page.data.map((s) => s.id).sort()).toEqual(byColleague.map((s) => s.id).sort());
    expect(deps.memberships.queries.filter((q) => q.userId !== 'owner-1')).toEqual([
      { orgId: 'org-a', userId: 'stranger' },
      { orgId: 'org-a', userId: 'colleague' },
    ]);
  });

  it('lists only the caller’s tenant’s sessions of a user, even on its own public board', async () => {
    // org-a owns board-a. Another tenant ("stranger", no member of org-a) created a session for its own
    // customer-1 on it: org-a may reach it by id or by board, but it is not org-a's customer-1.
    const byColleague = session(1, { createdByUserId: 'colleague' });
    const byStranger = session(2, { createdByUserId: 'stranger' });
    const mine = session(3, { createdByUserId: 'owner-1' });
    const deps = setup(
      [byColleague, byStranger, mine],
      [
        { orgId: 'org-a', userId: 'owner-1' },
        { orgId: 'org-a', userId: 'colleague' },
      ],
    );
    const byUser = await listSessions(deps, CALLER, query());
    expect(byUser.data.map((s) => s.id)).toEqual([mine.id, byColleague.id]);
    const byBoard = await listSessions(deps, CALLER, { boardId: 'board-a', limit: 20 });
    expect(byBoard.data.map((s) => s.id)).toEqual([mine.id, byStranger.id, byColleague.id]);
  });
});

describe('listSessions: a status filter reads whole only the sessions it answers', () => {
  const revoked = { revokedAt: '2026-02-15T00:00:00.000Z', revokedByUserId: 'x' };

  it('passes over sessions of another status by their index entries, reading none of them whole', async () => {
    const active = session(1);
    const others = Array.from({ length: 600 }, (_, i) => session(100 + i, revoked));
    const deps = setup([active, ...others], [{ orgId: 'org-a', userId: 'owner-1' }]);
    const page = await listSessions(deps, CALLER, query({ status: 'active', limit: 10 }));
    expect(page.data.map((s) => s.id)).toEqual([active.id]);
    expect(deps.sessions.sessionsRead).toBe(1);
    expect(deps.sessions.statesRead).toBe(0);
  });

  it('reads whole no more sessions than the page holds when more match', async () => {
    const active = Array.from({ length: 300 }, (_, i) => session(i));
    const deps = setup(active, [{ orgId: 'org-a', userId: 'owner-1' }]);
    const page = await listSessions(deps, CALLER, query({ status: 'active', limit: 5 }));
    expect(page.data).toHaveLength(5);
    expect(page.nextCursor).not.toBeNull();
    expect(deps.sessions.sessionsRead).toBe(5);
    expect(await allPages(deps, query({ status: 'active', limit: 50 }))).toEqual(
      active.map((s) => s.id).reverse(),
    );
  });

  it('takes a session a cut-off covers as revoked from the index entry and the record, without reading it', async () => {
    const covered = Array.from({ length: 50 }, (_, i) => session(i));
    const deps = setup(covered, [{ orgId: 'org-a', userId: 'owner-1' }]);
    await deps.sessions.writeCutoff([{ kind: 'board', boardId: 'board-a' }], {
      entry: { id: 'cut-1', at: '2026-02-10T00:00:00.000Z', byUserId: 'owner-1', byKeyId: 'key_1' },
      now: '2026-02-10T00:00:00.000Z',
    });
    const later = session(60 * 24 * 12);
    await deps.sessions.create(later);
    const active = await listSessions(deps, CALLER, { boardId: 'board-a', status: 'active', limit: 100 });
    expect(active.data.map((s) => s.id)).toEqual([later.id]);
    expect(deps.sessions.sessionsRead).toBe(1);
    const revokedPage = await listSessions(deps, CALLER, {
      boardId: 'board-a',
      status: 'revoked',
      limit: 100,
    });
    expect(revokedPage.data).toHaveLength(50);
    expect(
      revokedPage.data.every((s) => s.status === 'revoked' && s.revokedAt === '2026-02-10T00:00:00.000Z'),
    ).toBe(true);
  });

  it('decides from the index whose session a tenant record covers: the organization’s members’ yes, another tenant’s no', async () => {
    const colleagues = session(1);
    const guests = session(2, { createdByUserId: 'guest', tenant: { kind: 'keyOwner', id: 'guest' } });
    const deps = setup([colleagues, guests], [{ orgId: 'org-a', userId: 'owner-1' }]);
    await deps.sessions.writeCutoff(
      [
        {
          kind: 'tenantBoardUser',
          tenant: { kind: 'organization', id: 'org-a' },
          boardId: 'board-a',
          userId: 'customer-1',
        },
      ],
      {
        entry: { id: 'cut-1', at: '2026-02-10T00:00:00.000Z', byUserId: 'owner-1', byKeyId: 'key_1' },
        now: '2026-02-10T00:00:00.000Z',
      },
    );
    const active = await listSessions(deps, CALLER, { boardId: 'board-a', status: 'active', limit: 100 });
    expect(active.data.map((s) => s.id)).toEqual([guests.id]);
    // Only the session that matched was read whole: the colleague's was decided from its index entry.
    expect(deps.sessions.sessionsRead).toBe(1);
    const revoked = await listSessions(deps, CALLER, { boardId: 'board-a', status: 'revoked', limit: 100 });
    expect(revoked.data.map((s) => s.id)).toEqual([colleagues.id]);
  });

  it('re-checks the status on the consistent read: a session revoked after its index entry was copied is not listed active', async () => {
    const stillActive = session(1);
    const justRevoked = session(2, revoked);
    const deps = setup([stillActive, justRevoked], [{ orgId: 'org-a', userId: 'owner-1' }]);
    // The index has not caught up with the revocation yet.
    deps.sessions.lagIndex(justRevoked.id, { revokedAt: null });
    const page = await listSessions(deps, CALLER, query({ status: 'active' }));
    expect(page.data.map((s) => s.id)).toEqual([stillActive.id]);
    expect(page.nextCursor).toBeNull();
  });

  it(`reads the state alone, at most ${MAX_STATE_READS_PER_PAGE} per page, where the scope’s index holds keys only`, async () => {
    // The caller is no member of org-b: its sessions on board-b are read through the keys-only index.
    const active = session(1, { boardId: 'board-b', orgId: 'org-b', createdByUserId: 'owner-1' });
    const others = Array.from({ length: 450 }, (_, i) =>
      session(100 + i, { boardId: 'board-b', orgId: 'org-b', createdByUserId: 'owner-1', ...revoked }),
    );
    const deps = setup([active, ...others]);
    const q: ListSessionsQuery = { boardId: 'board-b', status: 'active', limit: 10 };
    const first = await listSessions(deps, CALLER, q);
    expect(first.data).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    expect(deps.sessions.statesRead).toBe(MAX_STATE_READS_PER_PAGE);
    expect(deps.sessions.sessionsRead).toBe(0);
    expect(await allPages(deps, q)).toEqual([active.id]);
    expect(deps.sessions.sessionsRead).toBe(1);
  });

  it('reads index entries in proportion to what it examines across a scope’s 16 partitions', async () => {
    const others = Array.from({ length: MAX_EXAMINED_PER_PAGE + 200 }, (_, i) => session(100 + i, revoked));
    const deps = setup(others, [{ orgId: 'org-a', userId: 'owner-1' }]);
    deps.sessions.partitions = 16;
    const page = await listSessions(deps, CALLER, { boardId: 'board-a', status: 'active', limit: 100 });
    expect(page.data).toEqual([]);
    expect(page.nextCursor).not.toBeNull();
    // What it examined, and at most one partition page (its share of a batch of 100, and one) left over
    // in each partition.
    expect(deps.sessions.indexEntriesRead).toBeLessThanOrEqual(
      MAX_EXAMINED_PER_PAGE + 16 * (Math.ceil(100 / 16) + 1),
    );
    expect(deps.sessions.indexEntriesRead).toBeGreaterThanOrEqual(MAX_EXAMINED_PER_PAGE);
  });

  it('pages a scope of 16 partitions newest first, nothing repeated or skipped, whatever the filter', async () => {
    const made = Array.from({ length: 230 }, (_, i) => session(i, i % 3 === 0 ? revoked : {}));
    const deps = setup(made, [{ orgId: 'org-a', userId: 'owner-1' }]);
    deps.sessions.partitions = 16;
    const newest = made.map((s) => s.id).reverse();
    expect(await allPages(deps, query({ limit: 7 }))).toEqual(newest);
    const revokedIds = made
      .filter((_, i) => i % 3 === 0)
      .map((s) => s.id)
      .reverse();
    expect(await allPages(deps, query({ limit: 7, status: 'revoked' }))).toEqual(revokedIds);
  });
});
