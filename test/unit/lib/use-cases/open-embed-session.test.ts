import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  EmbeddedBoardGoneError,
  InvalidTokenError,
  MissingTokenError,
  SessionExpiredError,
  SessionRevokedError,
} from '#lib/domain/errors';
import type { SessionRepository } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { type OpenEmbedSessionDeps, openEmbedSession } from '#lib/use-cases/open-embed-session';
import { FakeBoards, FakeSessions, fixedClock, PUBLIC_BOARD } from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz012-_9';
const NOW = '2026-06-01T12:00:00.000Z';

function stored(overrides: Partial<StoredSession> = {}): StoredSession {
  return storedSession({
    id: 'session-1',
    boardId: PUBLIC_BOARD.boardId,
    tokenHash: createHash('sha256').update(TOKEN).digest('hex'),
    userId: 'u-1',
    email: 'u@example.com',
    metadata: { a: 1 },
    createdAt: '2026-06-01T11:00:00.000Z',
    expiresAt: '2026-06-01T13:00:00.000Z',
    ...overrides,
  });
}

/** Sessions whose token index shows a session only after `missesBeforeVisible` lookups, like a lagging GSI. */
class LaggingSessions extends FakeSessions {
  readonly lookups: string[] = [];

  constructor(
    sessions: StoredSession[],
    private readonly missesBeforeVisible = 0,
  ) {
    super(sessions);
  }

  override async lookupToken(tokenHash: string) {
    this.lookups.push(tokenHash);
    return this.lookups.length > this.missesBeforeVisible ? super.lookupToken(tokenHash) : undefined;
  }
}

function laggingSessions(session: StoredSession | undefined, missesBeforeVisible = 0) {
  const repository = new LaggingSessions(session ? [session] : [], missesBeforeVisible);
  return { repository, lookups: repository.lookups };
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
  it('returns the session without its token hash, and its board, with three reads', async () => {
    const { repository, lookups } = laggingSessions(stored());
    const { deps: d, boards } = deps(repository);
    const view = await openEmbedSession(d, TOKEN);
    expect(view.board).toEqual(PUBLIC_BOARD);
    expect(view.session.id).toBe('session-1');
    expect(view.session).not.toHaveProperty('tokenHash');
    expect(lookups).toEqual([createHash('sha256').update(TOKEN).digest('hex')]);
    // The index only says where the session is; its state comes from a consistent read of the item.
    expect(repository.calls).toEqual(['lookupToken', 'get']);
    expect(boards.gets).toEqual([PUBLIC_BOARD.boardId]);
  });

  it('refuses a revoked session, from the consistent read and not from the index', async () => {
    const { repository } = laggingSessions(stored());
    await repository.markRevoked('session-1', { revokedAt: NOW, byUserId: 'owner-1', byKeyId: 'k' });
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(SessionRevokedError);
  });

  it('calls a session that is both revoked and expired revoked', async () => {
    const { repository } = laggingSessions(stored({ expiresAt: '2026-01-01T00:00:00.000Z' }));
    await repository.markRevoked('session-1', { revokedAt: NOW, byUserId: 'owner-1', byKeyId: 'k' });
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(SessionRevokedError);
  });

  it('calls the link invalid when the session was deleted after the index was read', async () => {
    const { repository } = laggingSessions(stored());
    repository.get = async () => undefined;
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(InvalidTokenError);
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

  it('reports expiry rather than a deleted board', async () => {
    const { repository } = laggingSessions(
      stored({ expiresAt: '2026-01-01T00:00:00.000Z', boardId: 'gone' }),
    );
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(SessionExpiredError);
  });

  it('refuses a session whose board no longer exists', async () => {
    const { repository } = laggingSessions(stored({ boardId: 'deleted' }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      EmbeddedBoardGoneError,
    );
  });
});
