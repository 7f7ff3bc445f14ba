import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Board } from '#lib/domain/board';
import { sessionIdOfToken } from '#lib/domain/credentials';
import {
  BoardAccessDeniedError,
  BoardNotFoundError,
  StorageUnavailableError,
  ValidationError,
} from '#lib/domain/errors';
import { cryptoRandom } from '#lib/platform/system';
import type { CreateSessionRequest } from '#lib/use-cases/create-session';
import {
  type CreateSessionDeps,
  createSession,
  decodeSessionIdentity,
  encodeSessionIdentity,
  MAX_TIMESTAMP_MS,
} from '#lib/use-cases/create-session';
import {
  FakeBoards,
  FakeMemberships,
  FakeSessions,
  fixedClock,
  PRIVATE_BOARD,
  PUBLIC_BOARD,
  sequenceRandom,
  tickingClock,
} from '#test/support/fakes';
import {
  ADA_PROFILE,
  DEFAULT_LIFETIME_SECONDS,
  keysOf,
  OMITTED_OPTIONALS,
  SESSION_FIELDS,
  sorted,
} from '#test/support/fixtures';

const NOW = '2026-01-01T00:00:00.000Z';
const BASE_URL = 'https://api.example.com/prod';
const OWNER = 'owner-1';

function setup(
  options: {
    boards?: Board[];
    members?: Array<{ orgId: string; userId: string }>;
    now?: string;
    random?: CreateSessionDeps['random'];
  } = {},
) {
  const deps = {
    boards: new FakeBoards(options.boards ?? [PUBLIC_BOARD, PRIVATE_BOARD]),
    memberships: new FakeMemberships(options.members ?? []),
    sessions: new FakeSessions(),
    clock: fixedClock(options.now ?? NOW),
    random: options.random ?? sequenceRandom(),
  };
  return deps;
}

function request(overrides: Partial<CreateSessionRequest> = {}): CreateSessionRequest {
  return {
    boardId: PUBLIC_BOARD.boardId,
    userId: 'customer-42',
    email: 'ada@example.com',
    ...OMITTED_OPTIONALS,
    metadata: {},
    expiresInSeconds: DEFAULT_LIFETIME_SECONDS,
    ...overrides,
  };
}

const run = (deps: CreateSessionDeps, overrides: Partial<CreateSessionRequest> = {}, keyOwnerId = OWNER) =>
  createSession(deps, {
    keyOwner: { userId: keyOwnerId, keyId: 'key_test' },
    request: request(overrides),
    baseUrl: BASE_URL,
  });

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('createSession: the created session', () => {
  it('returns {session, sessionToken, embedUrl} with every session field of the spec', async () => {
    const random = sequenceRandom();
    const deps = setup({ random });
    const result = await run(deps, {
      firstName: 'Ada',
      lastName: 'Lovelace',
      avatarUrl: 'https://cdn.example.com/ada.png',
      plan: 'pro',
      metadata: { team: 'analytics', seats: 3 },
      expiresInSeconds: 3600,
    });

    expect(Object.keys(result).sort()).toEqual(['embedUrl', 'session', 'sessionToken']);
    expect(result.session).toEqual({
      id: sessionIdOfToken(result.sessionToken),
      boardId: PUBLIC_BOARD.boardId,
      token: result.sessionToken,
      ...ADA_PROFILE,
      metadata: { team: 'analytics', seats: 3 },
      expiresAt: '2026-01-01T01:00:00.000Z',
      createdAt: NOW,
      status: 'active',
      revokedAt: null,
      bindToBrowser: false,
      boundAt: null,
    });
    expect(Object.keys(result.session)).toEqual([...SESSION_FIELDS]);
  });

  it('keeps nulls and an empty metadata object, so the response shape never varies', async () => {
    const { session } = await run(setup());
    expect(session).toMatchObject({
      firstName: null,
      lastName: null,
      avatarUrl: null,
      plan: null,
      metadata: {},
    });
    expect(keysOf(session)).toEqual(sorted(SESSION_FIELDS));
  });

  it('never exposes the token hash in the response', async () => {
    const result = await run(setup());
    expect(result.session).not.toHaveProperty('tokenHash');
    expect(JSON.stringify(result)).not.toContain(sha256(result.sessionToken));
  });
});

describe('createSession: the token', () => {
  it('is 32 characters from the URL-safe alphabet, made from 24 random bytes', async () => {
    // Bytes whose standard base64 is "++//": base64url must turn them into "--__".
    const random = sequenceRandom([0xfb, 0xef, 0xff]);
    const { session } = await run(setup({ random }));
    expect(random.sizes).toEqual([24]);
    expect(session.token).toBe('--__'.repeat(8));
    expect(session.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it('is the base64url encoding of the random bytes', async () => {
    const random = sequenceRandom([0, 16, 131, 16, 81, 135, 32, 146, 139, 48, 211, 143]);
    const { session } = await run(setup({ random }));
    expect(session.token).toBe(
      Buffer.from([
        0, 16, 131, 16, 81, 135, 32, 146, 139, 48, 211, 143, 0, 16, 131, 16, 81, 135, 32, 146, 139, 48, 211,
        143,
      ]).toString('base64url'),
    );
  });

  it('is returned as sessionToken and carried by embedUrl as its token parameter', async () => {
    const result = await run(setup());
    expect(result.sessionToken).toBe(result.session.token);
    expect(result.embedUrl).toBe(`${BASE_URL}/embed?token=${result.session.token}`);
    expect(new URL(result.embedUrl).searchParams.get('token')).toBe(result.session.token);
  });

  it('differs for every session, with real randomness', async () => {
    const deps = setup({ random: cryptoRandom });
    const tokens = new Set<string>();
    for (let i = 0; i < 50; i++) tokens.add((await run(deps)).sessionToken);
    expect(tokens.size).toBe(50);
  });
});

describe('createSession: what is stored', () => {
  it('stores the SHA-256 of the token and never the token itself', async () => {
    const deps = setup();
    const result = await run(deps);
    expect(deps.sessions.created).toHaveLength(1);
    const stored = deps.sessions.created[0];
    expect(stored?.tokenHash).toBe(sha256(result.sessionToken));
    expect(stored?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored).not.toHaveProperty('token');
    expect(JSON.stringify(stored)).not.toContain(result.sessionToken);
  });

  it('stores every other field exactly as returned, with its board’s organization, its tenant and its creator', async () => {
    const deps = setup();
    const { session } = await run(deps, { firstName: 'Ada', metadata: { a: [1, { b: null }] } });
    const { token: _token, status: _status, ...rest } = session;
    expect(deps.sessions.created[0]).toEqual({
      ...rest,
      tokenHash: sha256(session.token),
      orgId: PUBLIC_BOARD.orgId,
      tenant: { kind: 'keyOwner', id: OWNER },
      createdByUserId: OWNER,
      createdByKeyId: 'key_test',
      revokedByUserId: null,
      revokedByKeyId: null,
      bindingHash: null,
    });
  });

  it('records bindToBrowser as asked, unbound until the embed page is first loaded', async () => {
    const deps = setup();
    const { session } = await run(deps, { bindToBrowser: true });
    expect(session).toMatchObject({ bindToBrowser: true, boundAt: null });
    expect(deps.sessions.created[0]).toMatchObject({ bindToBrowser: true, bindingHash: null, boundAt: null });
  });

  it('derives the session id from its token (so the embed page reads it by its key), through a hash that is not the stored one', async () => {
    const deps = setup({ random: sequenceRandom() });
    const { session } = await run(deps);
    expect(session.id).toBe(sessionIdOfToken(session.token));
    expect(session.id).not.toContain(session.token);
    expect(session.id.replaceAll('-', '')).not.toBe(sha256(session.token).slice(0, 32));
    expect(deps.sessions.created[0]?.id).toBe(session.id);
  });

  it('gives every session its own UUID-shaped id with real randomness', async () => {
    const deps = setup({ random: cryptoRandom });
    const first = await run(deps);
    const second = await run(deps);
    expect(first.session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first.session.id).not.toBe(second.session.id);
  });

  it('allows several sessions for the same board and user, and the same user on other boards', async () => {
    const deps = setup({ members: [{ orgId: PRIVATE_BOARD.orgId, userId: OWNER }] });
    const a = await run(deps);
    const b = await run(deps);
    const c = await run(deps, { boardId: PRIVATE_BOARD.boardId });
    expect(deps.sessions.created.map((s) => s.boardId)).toEqual([
      PUBLIC_BOARD.boardId,
      PUBLIC_BOARD.boardId,
      PRIVATE_BOARD.boardId,
    ]);
    expect(new Set([a.sessionToken, b.sessionToken, c.sessionToken]).size).toBe(3);
    expect(new Set([a.session.id, b.session.id, c.session.id]).size).toBe(3);
  });
});

describe('createSession: expiry', () => {
  it('sets expiresAt to createdAt plus expiresInSeconds', async () => {
    const { session } = await run(setup(), { expiresInSeconds: 90 });
    expect(session.createdAt).toBe('2026-01-01T00:00:00.000Z');
    expect(session.expiresAt).toBe('2026-01-01T00:01:30.000Z');
  });

  it('uses the 30-day default it is given', async () => {
    const { session } = await run(setup(), { expiresInSeconds: 2_592_000 });
    expect(session.expiresAt).toBe('2026-01-31T00:00:00.000Z');
  });

  it('reads the clock once, so the lifetime is exact even when time moves on', async () => {
    const deps = { ...setup(), clock: tickingClock('2026-01-01T00:00:00.000Z', 7) };
    const { session } = await run(deps, { expiresInSeconds: 1 });
    expect(deps.clock.reads).toBe(1);
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(1000);
  });

  it('writes both timestamps as ISO 8601 UTC with milliseconds', async () => {
    const { session } = await run(setup({ now: '2026-03-04T05:06:07.089Z' }), { expiresInSeconds: 1 });
    expect(session.createdAt).toBe('2026-03-04T05:06:07.089Z');
    expect(session.expiresAt).toBe('2026-03-04T05:06:08.089Z');
    expect(session.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('accepts the largest lifetime that keeps expiresAt within year 9999', async () => {
    const largest = Math.floor((MAX_TIMESTAMP_MS - Date.parse(NOW)) / 1000);
    const { session } = await run(setup(), { expiresInSeconds: largest });
    expect(session.expiresAt).toMatch(/^9999-12-31T23:59:59\.\d{3}Z$/);
  });

  it.each([
    [
      'one second past year 9999',
      Math.floor((Date.UTC(9999, 11, 31, 23, 59, 59, 999) - Date.parse(NOW)) / 1000) + 1,
    ],
    ['far beyond it', 1e15],
    ['beyond 2^53', 2 ** 60],
  ])('rejects a lifetime %s as too large before touching any repository', async (_name, expiresInSeconds) => {
    const deps = setup();
    const error = await run(deps, { expiresInSeconds }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^expiresInSeconds is too large/);
    expect(deps.boards.lookups).toEqual([]);
    expect(deps.memberships.queries).toEqual([]);
    expect(deps.sessions.created).toEqual([]);
  });
});

describe('createSession: board access', () => {
  it('refuses a board that does not exist with BoardNotFoundError, checking nothing else', async () => {
    const deps = setup();
    const error = await run(deps, { boardId: 'no-such-board' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BoardNotFoundError);
    expect((error as BoardNotFoundError).boardId).toBe('no-such-board');
    expect((error as Error).message).toMatch(/not found/);
    expect(deps.memberships.queries).toEqual([]);
    expect(deps.sessions.created).toEqual([]);
  });

  it('creates a session on a PUBLIC board for a key owner of no organization', async () => {
    const deps = setup();
    await run(deps, {}, 'stranger');
    expect(deps.boards.lookups).toEqual([PUBLIC_BOARD.boardId]);
    expect(deps.sessions.created).toHaveLength(1);
  });

  it.each([
    ['PRIVATE', 'PRIVATE'],
    ['"public" in lower case', 'public'],
    ['"Public"', 'Public'],
    ['" PUBLIC" with a space', ' PUBLIC'],
    ['an empty visibility', ''],
    ['a missing visibility', undefined],
  ])('treats a board with %s visibility as private and refuses a non-member', async (_name, visibility) => {
    const board = { boardId: 'b', orgId: 'org-b', visibility, name: null } as unknown as Board;
    const deps = setup({ boards: [board] });
    const error = await run(deps, { boardId: 'b' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BoardAccessDeniedError);
    expect((error as Error).message).toBe(
      'Sessions can only be created for public boards or boards owned by your organization',
    );
    expect(deps.memberships.queries).toEqual([{ orgId: 'org-b', userId: OWNER }]);
    expect(deps.sessions.created).toEqual([]);
  });

  it('creates a session on a private board when the key owner is a member of its organization', async () => {
    const deps = setup({ members: [{ orgId: PRIVATE_BOARD.orgId, userId: OWNER }] });
    const { session } = await run(deps, { boardId: PRIVATE_BOARD.boardId });
    expect(session.boardId).toBe(PRIVATE_BOARD.boardId);
    expect(deps.memberships.queries).toEqual([{ orgId: PRIVATE_BOARD.orgId, userId: OWNER }]);
    expect(deps.sessions.created).toHaveLength(1);
  });

  it('checks the key owner, not the session user, against the board organization', async () => {
    const deps = setup({ members: [{ orgId: PRIVATE_BOARD.orgId, userId: 'customer-42' }] });
    await expect(run(deps, { boardId: PRIVATE_BOARD.boardId, userId: 'customer-42' })).rejects.toBeInstanceOf(
      BoardAccessDeniedError,
    );
  });

  it('refuses a private board recorded without an organization, without querying memberships', async () => {
    const board: Board = { boardId: 'orphan', orgId: '', visibility: 'PRIVATE', name: null };
    const deps = setup({ boards: [board], members: [{ orgId: '', userId: OWNER }] });
    await expect(run(deps, { boardId: 'orphan' })).rejects.toBeInstanceOf(BoardAccessDeniedError);
    expect(deps.memberships.queries).toEqual([]);
  });

  it('refuses a member of another organization', async () => {
    const deps = setup({ members: [{ orgId: 'org-other', userId: OWNER }] });
    await expect(run(deps, { boardId: PRIVATE_BOARD.boardId })).rejects.toBeInstanceOf(
      BoardAccessDeniedError,
    );
  });
});

describe('createSession: storage failures', () => {
  it('passes a storage failure on and returns nothing', async () => {
    const deps = setup();
    deps.sessions.failWith = new StorageUnavailableError();
    await expect(run(deps)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('createSession: an identity fixed before the run (a keyed create)', () => {
  const command = () => ({
    keyOwner: { userId: OWNER, keyId: 'key_test' },
    request: request(),
    baseUrl: BASE_URL,
  });
  const identity = { id: 'fixed-session-id', token: 'T'.repeat(32) };

  it('stores the session under that id and token', async () => {
    const deps = setup();
    const created = await createSession(deps, { ...command(), identity });
    expect(created.session.id).toBe(identity.id);
    expect(created.sessionToken).toBe(identity.token);
    expect(deps.sessions.created[0]?.tokenHash).toBe(sha256(identity.token));
  });

  it('meets its own earlier write when run again: one session, described as the first run stored it', async () => {
    const deps = setup();
    const first = await createSession(deps, { ...command(), identity });
    const again = await createSession(
      { ...deps, clock: fixedClock('2026-01-01T00:00:07.000Z') },
      { ...command(), identity },
    );
    expect(deps.sessions.created).toHaveLength(1);
    expect(again).toEqual(first);
  });

  it('round-trips through the text kept with the claim, and rejects anything else', () => {
    expect(decodeSessionIdentity(encodeSessionIdentity(identity))).toEqual(identity);
    expect(decodeSessionIdentity(undefined)).toBeUndefined();
    expect(decodeSessionIdentity('not json')).toBeUndefined();
    expect(decodeSessionIdentity(JSON.stringify({ id: 'x', token: 'short' }))).toBeUndefined();
    expect(decodeSessionIdentity(JSON.stringify({ token: identity.token }))).toBeUndefined();
  });
});

describe('createSession: the tenant, decided once and stored with the session', () => {
  it('is the board’s organization when the key owner is a member of it', async () => {
    const deps = setup({ members: [{ orgId: PRIVATE_BOARD.orgId, userId: OWNER }] });
    await run(deps, { boardId: PRIVATE_BOARD.boardId });
    expect(deps.sessions.created[0]?.tenant).toEqual({ kind: 'organization', id: PRIVATE_BOARD.orgId });
  });

  it('is the board’s organization on a PUBLIC board too, when the key owner is a member', async () => {
    const deps = setup({ members: [{ orgId: PUBLIC_BOARD.orgId, userId: OWNER }] });
    await run(deps);
    expect(deps.sessions.created[0]?.tenant).toEqual({ kind: 'organization', id: PUBLIC_BOARD.orgId });
  });

  it('is the key owner on another organization’s PUBLIC board, from one membership read', async () => {
    const deps = setup({ members: [{ orgId: 'org-elsewhere', userId: 'stranger' }] });
    await run(deps, {}, 'stranger');
    expect(deps.memberships.queries).toEqual([{ orgId: PUBLIC_BOARD.orgId, userId: 'stranger' }]);
    expect(deps.sessions.created[0]?.tenant).toEqual({ kind: 'keyOwner', id: 'stranger' });
  });

  it('is the key owner on a PUBLIC board recorded without an organization, without a membership read', async () => {
    const board: Board = { boardId: 'orphan-public', orgId: '', visibility: 'PUBLIC', name: null };
    const deps = setup({ boards: [board] });
    await run(deps, { boardId: 'orphan-public' });
    expect(deps.memberships.queries).toEqual([]);
    expect(deps.sessions.created[0]?.tenant).toEqual({ kind: 'keyOwner', id: OWNER });
  });

  it('keeps an organization id and a key owner id that are equal apart, by their kind', async () => {
    const board: Board = { boardId: 'b-same', orgId: 'same-id', visibility: 'PUBLIC', name: null };
    const member = setup({ boards: [board], members: [{ orgId: 'same-id', userId: 'someone' }] });
    await run(member, { boardId: 'b-same' }, 'someone');
    const outsider = setup({ boards: [board] });
    await run(outsider, { boardId: 'b-same' }, 'same-id');
    expect(member.sessions.created[0]?.tenant).toEqual({ kind: 'organization', id: 'same-id' });
    expect(outsider.sessions.created[0]?.tenant).toEqual({ kind: 'keyOwner', id: 'same-id' });
  });

  it('never shows the tenant in the answer: it is the service’s own field', async () => {
    const { session } = await run(setup());
    expect(session).not.toHaveProperty('tenant');
  });
});
