import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  EmbeddedBoardGoneError,
  InvalidTokenError,
  MissingTokenError,
  SessionExpiredError,
} from '#lib/domain/errors';
import type { SessionRepository } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { type OpenEmbedSessionDeps, openEmbedSession } from '#lib/use-cases/open-embed-session';
import { FakeBoards, fixedClock, PUBLIC_BOARD } from '#test/support/fakes';

const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz012-_9';
const NOW = '2026-06-01T12:00:00.000Z';

function stored(overrides: Partial<StoredSession> = {}): StoredSession {
  return {
    id: 'session-1',
    boardId: PUBLIC_BOARD.boardId,
    tokenHash: createHash('sha256').update(TOKEN).digest('hex'),
    userId: 'u-1',
    email: 'u@example.com',
    firstName: 'Ada',
    lastName: null,
    avatarUrl: null,
    plan: null,
    metadata: { a: 1 },
    createdAt: '2026-06-01T11:00:00.000Z',
    expiresAt: '2026-06-01T13:00:00.000Z',
    ...overrides,
  };
}

/** Sessions that appear only after `missesBeforeVisible` lookups, like a lagging GSI; counts lookups. */
function laggingSessions(session: StoredSession | undefined, missesBeforeVisible = 0) {
  const lookups: string[] = [];
  const repository: SessionRepository = {
    create: async () => undefined,
    findByTokenHash: async (hash) => {
      lookups.push(hash);
      return lookups.length > missesBeforeVisible && session?.tokenHash === hash ? session : undefined;
    },
  };
  return { repository, lookups };
}

function deps(sessions: SessionRepository, overrides: Partial<OpenEmbedSessionDeps> = {}) {
  const sleeps: number[] = [];
  const boards = new FakeBoards([PUBLIC_BOARD]);
  const all: OpenEmbedSessionDeps = {
    sessions,
    boards,
    clock: fixedClock(NOW),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    missRetryDelaysMs: [100, 200, 400],
    ...overrides,
  };
  return { deps: all, sleeps, boards };
}

describe('openEmbedSession', () => {
  it('returns the session without its token hash, and its board, with two reads', async () => {
    const { repository, lookups } = laggingSessions(stored());
    const { deps: d, boards } = deps(repository);
    const view = await openEmbedSession(d, TOKEN);
    expect(view.board).toEqual(PUBLIC_BOARD);
    expect(view.session.id).toBe('session-1');
    expect(view.session).not.toHaveProperty('tokenHash');
    expect(lookups).toEqual([createHash('sha256').update(TOKEN).digest('hex')]);
    expect(boards.gets).toEqual([PUBLIC_BOARD.boardId]);
  });

  it.each([undefined, ''])('refuses a missing token (%j) without touching DynamoDB', async (token) => {
    const { repository, lookups } = laggingSessions(stored());
    await expect(openEmbedSession(deps(repository).deps, token)).rejects.toBeInstanceOf(MissingTokenError);
    expect(lookups).toEqual([]);
  });

  it.each([
    ['31 characters', TOKEN.slice(1)],
    ['33 characters', `${TOKEN}A`],
    ['a character outside the URL-safe alphabet', `${TOKEN.slice(1)}+`],
    ['padding', `${TOKEN.slice(1)}=`],
  ])('refuses a token of %s without touching DynamoDB', async (_name, token) => {
    const { repository, lookups } = laggingSessions(stored());
    const { deps: d, sleeps } = deps(repository);
    await expect(openEmbedSession(d, token)).rejects.toBeInstanceOf(InvalidTokenError);
    expect(lookups).toEqual([]);
    expect(sleeps).toEqual([]);
  });

  it('opens a session the token index does not show yet, by retrying the miss', async () => {
    const { repository, lookups } = laggingSessions(stored(), 2);
    const { deps: d, sleeps } = deps(repository);
    const view = await openEmbedSession(d, TOKEN);
    expect(view.session.id).toBe('session-1');
    expect(lookups).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it('calls an unknown token invalid only after every retry', async () => {
    const { repository, lookups } = laggingSessions(undefined);
    const { deps: d, sleeps } = deps(repository);
    await expect(openEmbedSession(d, TOKEN)).rejects.toBeInstanceOf(InvalidTokenError);
    expect(lookups).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('treats the session as expired at exactly expiresAt', async () => {
    const { repository } = laggingSessions(stored({ expiresAt: NOW }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(SessionExpiredError);
  });

  it('keeps the session usable one millisecond before expiresAt', async () => {
    const { repository } = laggingSessions(stored({ expiresAt: '2026-06-01T12:00:00.001Z' }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).resolves.toBeDefined();
  });

  it('reports expiry before looking up the board', async () => {
    const { repository } = laggingSessions(
      stored({ expiresAt: '2026-01-01T00:00:00.000Z', boardId: 'gone' }),
    );
    const { deps: d, boards } = deps(repository);
    await expect(openEmbedSession(d, TOKEN)).rejects.toBeInstanceOf(SessionExpiredError);
    expect(boards.gets).toEqual([]);
  });

  it('refuses a session whose board no longer exists', async () => {
    const { repository } = laggingSessions(stored({ boardId: 'deleted' }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      EmbeddedBoardGoneError,
    );
  });
});
