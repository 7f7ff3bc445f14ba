import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bindingHash, sessionIdOfToken } from '#lib/domain/credentials';
import * as errors from '#lib/domain/errors';
import type { SessionRepository } from '#lib/domain/ports';
import type { SessionBinding, StoredSession } from '#lib/domain/session';
import { type OpenEmbedSessionDeps, openEmbedSession } from '#lib/use-cases/open-embed-session';
import { FakeBoards, FakeSessions, fixedClock, PUBLIC_BOARD, sequenceRandom } from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz012-_9';
const NOW = '2026-06-01T12:00:00.000Z';
/** The id a session created with TOKEN has: derived from the token. */
const ID = sessionIdOfToken(TOKEN);

function stored(overrides: Partial<StoredSession> = {}): StoredSession {
  return storedSession({
    id: ID,
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

/**
 * Makes the repository's bind write (the binding asked for, or the one `written` makes: another load's),
 * then fail as an outage does, its answer lost.
 */
function bindThenFail(
  repository: LaggingSessions,
  written: (id: string, asked: SessionBinding) => SessionBinding = (_id, asked) => asked,
) {
  const bind = repository.bind.bind(repository);
  repository.bind = async (id, asked) => {
    await bind(id, written(id, asked));
    throw new errors.StorageUnavailableError();
  };
}

function laggingSessions(session: StoredSession | undefined, missesBeforeVisible = 0) {
  const repository = new LaggingSessions(session ? [session] : [], missesBeforeVisible);
  return { repository, lookups: repository.lookups };
}

function deps(sessions: SessionRepository, overrides: Partial<OpenEmbedSessionDeps> = {}) {
  const boards = new FakeBoards([PUBLIC_BOARD]);
  const all: OpenEmbedSessionDeps = {
    sessions,
    boards,
    clock: fixedClock(NOW),
    random: sequenceRandom(),
    ...overrides,
  };
  return { deps: all, boards };
}

describe('openEmbedSession', () => {
  it('returns the session without its token hash, and its board, with three reads and no index', async () => {
    const { repository, lookups } = laggingSessions(stored());
    const { deps: d, boards } = deps(repository);
    const view = await openEmbedSession(d, TOKEN);
    expect(view.board).toEqual(PUBLIC_BOARD);
    expect(view.session.id).toBe(ID);
    expect(view.session).not.toHaveProperty('tokenHash');
    expect(lookups).toEqual([]);
    // The session by the id its token derives (consistent), then its cut-offs; the first load records
    // the opening.
    expect(repository.calls).toEqual(['get', 'applyCutoffs', 'markOpened']);
    expect(boards.lookups).toEqual([PUBLIC_BOARD.boardId]);
  });

  it('opens a session created before ids were derived from tokens through the token index, once', async () => {
    const { repository, lookups } = laggingSessions(stored({ id: 'legacy-1' }));
    const view = await openEmbedSession(deps(repository).deps, TOKEN);
    expect(view.session.id).toBe('legacy-1');
    expect(lookups).toHaveLength(1);
    expect(repository.calls).toEqual(['get', 'lookupToken', 'get', 'markOpened']);
  });

  it('refuses a revoked session, from the consistent read and not from the index', async () => {
    const { repository } = laggingSessions(stored());
    await repository.markRevoked(ID, { revokedAt: NOW, byUserId: 'owner-1', byKeyId: 'k' });
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.SessionRevokedError,
    );
  });

  it('calls a session that is both revoked and expired revoked', async () => {
    const { repository } = laggingSessions(stored({ expiresAt: '2026-01-01T00:00:00.000Z' }));
    await repository.markRevoked(ID, { revokedAt: NOW, byUserId: 'owner-1', byKeyId: 'k' });
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.SessionRevokedError,
    );
  });

  it('calls the link invalid when the session was deleted after the index was read', async () => {
    const { repository } = laggingSessions(stored({ id: 'legacy-1' }));
    repository.get = async () => undefined;
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.InvalidTokenError,
    );
  });

  it.each([undefined, ''])('refuses a missing token (%j) without touching DynamoDB', async (token) => {
    const { repository, lookups } = laggingSessions(stored());
    await expect(openEmbedSession(deps(repository).deps, token)).rejects.toBeInstanceOf(
      errors.MissingTokenError,
    );
    expect(lookups).toEqual([]);
  });

  it.each([
    ['31 characters', TOKEN.slice(1)],
    ['33 characters', `${TOKEN}A`],
    ['a character outside the URL-safe alphabet', `${TOKEN.slice(1)}+`],
    ['padding', `${TOKEN.slice(1)}=`],
  ])('refuses a token of %s without touching DynamoDB', async (_name, token) => {
    const { repository, lookups } = laggingSessions(stored());
    await expect(openEmbedSession(deps(repository).deps, token)).rejects.toBeInstanceOf(
      errors.InvalidTokenError,
    );
    expect(lookups).toEqual([]);
    expect(repository.calls).toEqual([]);
  });

  it('opens a session created a moment ago that no index shows yet: it is read by its id', async () => {
    const { repository, lookups } = laggingSessions(stored(), 3);
    const view = await openEmbedSession(deps(repository).deps, TOKEN);
    expect(view.session.id).toBe(ID);
    expect(lookups).toEqual([]);
  });

  it('calls an unknown token invalid after one read by id and one index query, waiting for nothing', async () => {
    const { repository, lookups } = laggingSessions(undefined);
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.InvalidTokenError,
    );
    expect(lookups).toHaveLength(1);
    expect(repository.calls).toEqual(['get', 'lookupToken']);
  });

  it('treats the session as expired at exactly expiresAt', async () => {
    const { repository } = laggingSessions(stored({ expiresAt: NOW }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.SessionExpiredError,
    );
  });

  it('keeps the session usable one millisecond before expiresAt', async () => {
    const { repository } = laggingSessions(stored({ expiresAt: '2026-06-01T12:00:00.001Z' }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).resolves.toBeDefined();
  });

  it('reports expiry rather than a deleted board', async () => {
    const { repository } = laggingSessions(
      stored({ expiresAt: '2026-01-01T00:00:00.000Z', boardId: 'gone' }),
    );
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.SessionExpiredError,
    );
  });

  it('refuses a session whose board no longer exists', async () => {
    const { repository } = laggingSessions(stored({ boardId: 'deleted' }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.EmbeddedBoardGoneError,
    );
  });
});

/** Two well-formed binding secrets: two browsers. */
const SECRET_A = 'A'.repeat(43);
const SECRET_B = 'B'.repeat(43);

describe('openEmbedSession: recording the first opening', () => {
  it('records openedAt on the first successful load, once: a session holding it costs no write', async () => {
    const { repository } = laggingSessions(stored());
    await openEmbedSession(deps(repository).deps, TOKEN);
    expect((await repository.get(ID))?.openedAt).toBe(NOW);
    repository.calls.length = 0;
    for (let load = 0; load < 3; load++) await openEmbedSession(deps(repository).deps, TOKEN);
    expect(repository.calls.filter((call) => call === 'markOpened')).toEqual([]);
  });

  it('records nothing for a refused load or a HEAD', async () => {
    const { repository } = laggingSessions(stored());
    await repository.markRevoked(ID, { revokedAt: NOW, byUserId: 'owner-1', byKeyId: 'k' });
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.SessionRevokedError,
    );
    const fresh = laggingSessions(stored()).repository;
    await openEmbedSession(deps(fresh).deps, TOKEN, [], { peek: true });
    expect([...repository.calls, ...fresh.calls]).not.toContain('markOpened');
  });
});

describe('openEmbedSession: a session created without bindToBrowser', () => {
  it('ignores binding cookies, writes nothing once opened and hands out no secret, as before the option existed', async () => {
    const { repository } = laggingSessions(stored({ openedAt: '2026-06-01T11:10:00.000Z' }));
    const view = await openEmbedSession(deps(repository).deps, TOKEN, [SECRET_A]);
    expect(view.bindingSecret).toBeUndefined();
    expect(view.session).not.toHaveProperty('bindingHash');
    expect(repository.calls).toEqual(['get', 'applyCutoffs']);
  });
});

describe('openEmbedSession: a session created with bindToBrowser', () => {
  const binding = (overrides: Partial<StoredSession> = {}) => stored({ bindToBrowser: true, ...overrides });
  const boundTo = (secret: string, overrides: Partial<StoredSession> = {}) =>
    binding({
      bindingHash: bindingHash(ID, secret),
      boundAt: '2026-06-01T11:30:00.000Z',
      openedAt: '2026-06-01T11:30:00.000Z',
      ...overrides,
    });

  it('binds on the first load to a new 32-byte secret, storing only its keyed hash and the time', async () => {
    const { repository } = laggingSessions(binding());
    const random = sequenceRandom([7]);
    const view = await openEmbedSession(deps(repository, { random }).deps, TOKEN);
    const secret = Buffer.alloc(32, 7).toString('base64url');
    expect(random.sizes).toEqual([32]);
    expect(view.bindingSecret).toBe(secret);
    expect(view.session.boundAt).toBe(NOW);
    expect(view.session).not.toHaveProperty('bindingHash');
    const saved = await repository.get(ID);
    expect(saved?.bindingHash).toBe(bindingHash(ID, secret));
    expect(saved?.boundAt).toBe(NOW);
    expect(JSON.stringify(saved)).not.toContain(secret);
    expect(repository.calls).toEqual(['get', 'applyCutoffs', 'bind', 'markOpened', 'get']);
  });

  it('binds to the secret the browser already holds, so one cookie serves all its sessions', async () => {
    const { repository } = laggingSessions(binding());
    const random = sequenceRandom();
    const view = await openEmbedSession(deps(repository, { random }).deps, TOKEN, [SECRET_A]);
    expect(view.bindingSecret).toBe(SECRET_A);
    expect(random.sizes).toEqual([]);
    expect((await repository.get(ID))?.bindingHash).toBe(bindingHash(ID, SECRET_A));
  });

  it('keys the stored hash with the session id, so two sessions bound by one browser store unrelated hashes', () => {
    expect(bindingHash(ID, SECRET_A)).not.toBe(bindingHash('session-2', SECRET_A));
    expect(bindingHash(ID, SECRET_A)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores a malformed cookie value and binds to a new secret', async () => {
    const { repository } = laggingSessions(binding());
    const view = await openEmbedSession(deps(repository).deps, TOKEN, ['short', `${SECRET_A}=`]);
    expect(view.bindingSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(view.bindingSecret).not.toBe(SECRET_A);
  });

  it('opens a bound session in the browser holding its secret, and hands the secret back to refresh the cookie', async () => {
    const { repository } = laggingSessions(boundTo(SECRET_A));
    const view = await openEmbedSession(deps(repository).deps, TOKEN, [SECRET_B, SECRET_A]);
    expect(view.bindingSecret).toBe(SECRET_A);
    expect(view.session.boundAt).toBe('2026-06-01T11:30:00.000Z');
    expect(repository.calls).toEqual(['get', 'applyCutoffs']);
  });

  it.each([
    ['no cookie', []],
    ['another browser’s secret', [SECRET_B]],
    ['a malformed value', ['x']],
  ])('refuses a bound session with %s as already opened in another browser', async (_label, secrets) => {
    const { repository } = laggingSessions(boundTo(SECRET_A));
    const error = await openEmbedSession(deps(repository).deps, TOKEN, secrets).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.SessionBoundElsewhereError);
    expect((error as Error).message).toBe('This embed link was already opened in another browser');
    expect((error as errors.SessionBoundElsewhereError).board).toEqual(PUBLIC_BOARD);
    expect(repository.calls).toEqual(['get', 'applyCutoffs']);
  });

  it('says "revoked" for a revoked bound session, whichever browser asks', async () => {
    const { repository } = laggingSessions(boundTo(SECRET_A, { revokedAt: NOW }));
    for (const secrets of [[SECRET_A], [SECRET_B], []]) {
      await expect(openEmbedSession(deps(repository).deps, TOKEN, secrets)).rejects.toBeInstanceOf(
        errors.SessionRevokedError,
      );
    }
  });

  it('says "expired" for an expired bound session in another browser, and never binds an expired one', async () => {
    const { repository } = laggingSessions(boundTo(SECRET_A, { expiresAt: NOW }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN, [SECRET_B])).rejects.toBeInstanceOf(
      errors.SessionExpiredError,
    );
    const unbound = laggingSessions(binding({ expiresAt: NOW })).repository;
    await expect(openEmbedSession(deps(unbound).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.SessionExpiredError,
    );
    expect(unbound.calls).not.toContain('bind');
  });

  it('does not bind a session whose board is gone', async () => {
    const { repository } = laggingSessions(binding({ boardId: 'deleted' }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.EmbeddedBoardGoneError,
    );
    expect(repository.calls).not.toContain('bind');
  });

  it('lets only the winner of two first loads in two browsers in: the other is refused', async () => {
    const { repository } = laggingSessions(binding());
    const [a, b] = await Promise.allSettled([
      openEmbedSession(deps(repository).deps, TOKEN, [SECRET_A]),
      openEmbedSession(deps(repository).deps, TOKEN, [SECRET_B]),
    ]);
    const outcomes = [a, b].map((outcome) => outcome.status);
    expect(outcomes.sort()).toEqual(['fulfilled', 'rejected']);
    const won = [a, b].find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{
      bindingSecret?: string;
    }>;
    const lost = [a, b].find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(errors.SessionBoundElsewhereError);
    expect((await repository.get(ID))?.bindingHash).toBe(bindingHash(ID, won.value.bindingSecret as string));
  });

  it('opens the session for the loser of a race when it holds the winning secret (two tabs, one browser)', async () => {
    const { repository } = laggingSessions(binding());
    // Another load of the same browser binds between this load's read and its write.
    const bind = repository.bind.bind(repository);
    repository.bind = async (id, value) => {
      await bind(id, { bindingHash: bindingHash(id, SECRET_A), boundAt: '2026-06-01T11:59:59.000Z' });
      return bind(id, value);
    };
    const view = await openEmbedSession(deps(repository).deps, TOKEN, [SECRET_A]);
    expect(view.bindingSecret).toBe(SECRET_A);
    expect(view.session.boundAt).toBe('2026-06-01T11:59:59.000Z');
  });

  it('says "revoked" when the session was revoked between its read and the binding write', async () => {
    const { repository } = laggingSessions(binding());
    const bind = repository.bind.bind(repository);
    repository.bind = async (id, value) => {
      await repository.markRevoked(id, { revokedAt: NOW, byUserId: 'owner-1', byKeyId: 'k' });
      return bind(id, value);
    };
    await expect(openEmbedSession(deps(repository).deps, TOKEN, [SECRET_A])).rejects.toBeInstanceOf(
      errors.SessionRevokedError,
    );
    expect((await repository.get(ID))?.bindingHash).toBeNull();
  });

  it('calls the link invalid when the session disappeared before the binding write', async () => {
    const { repository } = laggingSessions(binding());
    const get = repository.get.bind(repository);
    let reads = 0;
    repository.get = async (id) => (++reads === 1 ? get(id) : undefined);
    repository.bind = async () => false;
    await expect(openEmbedSession(deps(repository).deps, TOKEN)).rejects.toBeInstanceOf(
      errors.InvalidTokenError,
    );
  });
});

describe('openEmbedSession: a peek (HEAD)', () => {
  it('answers an unbound bindToBrowser link without binding it or handing out a secret', async () => {
    const { repository } = laggingSessions(stored({ bindToBrowser: true }));
    const view = await openEmbedSession(deps(repository).deps, TOKEN, [], { peek: true });
    expect(view.bindingSecret).toBeUndefined();
    expect(repository.calls).not.toContain('bind');
    expect((await repository.get(ID))?.bindingHash).toBeNull();
  });

  it('still refuses a bound link to a browser without its secret, and lets the right one in', async () => {
    const bound = stored({
      bindToBrowser: true,
      bindingHash: bindingHash(ID, SECRET_A),
      boundAt: NOW,
    });
    const { repository } = laggingSessions(bound);
    await expect(
      openEmbedSession(deps(repository).deps, TOKEN, [SECRET_B], { peek: true }),
    ).rejects.toBeInstanceOf(errors.SessionBoundElsewhereError);
    const view = await openEmbedSession(deps(repository).deps, TOKEN, [SECRET_A], { peek: true });
    expect(view.bindingSecret).toBeUndefined();
  });
});

describe('openEmbedSession: a bind whose answer is lost or late', () => {
  const binding = () => stored({ bindToBrowser: true });

  it('recognises its own binding, written though its answer was lost, and hands out its new secret', async () => {
    const { repository } = laggingSessions(binding());
    const bind = repository.bind.bind(repository);
    // The write lands; the SDK's retry meets it and is refused by the condition.
    repository.bind = async (id, value) => {
      await bind(id, value);
      return false;
    };
    const view = await openEmbedSession(deps(repository).deps, TOKEN);
    expect(view.bindingSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await repository.get(ID))?.bindingHash).toBe(bindingHash(ID, view.bindingSecret as string));
  });

  it('undoes a bind it could not confirm and answers 503, leaving the link to the next load', async () => {
    const { repository } = laggingSessions(binding());
    bindThenFail(repository);
    const failure = openEmbedSession(deps(repository).deps, TOKEN);
    await expect(failure).rejects.toBeInstanceOf(errors.StorageUnavailableError);
    await expect(failure).rejects.not.toBeInstanceOf(errors.UnconfirmedBindingError);
    expect(await repository.get(ID)).toMatchObject({ bindingHash: null, boundAt: null });
  });

  it('undoes only its own binding, never one another load made', async () => {
    const { repository } = laggingSessions(binding());
    bindThenFail(repository, (id) => ({ bindingHash: bindingHash(id, SECRET_B), boundAt: NOW }));
    await expect(openEmbedSession(deps(repository).deps, TOKEN, [SECRET_A])).rejects.toBeInstanceOf(
      errors.StorageUnavailableError,
    );
    expect((await repository.get(ID))?.bindingHash).toBe(bindingHash(ID, SECRET_B));
  });

  it('gives the browser the secret with the 503 when the binding can be neither confirmed nor undone', async () => {
    const { repository } = laggingSessions(binding());
    bindThenFail(repository);
    repository.unbind = async () => {
      throw new errors.StorageUnavailableError();
    };
    const failure = openEmbedSession(deps(repository).deps, TOKEN);
    await expect(failure).rejects.toBeInstanceOf(errors.UnconfirmedBindingError);
    const { bindingSecret } = (await failure.catch((error) => error)) as errors.UnconfirmedBindingError;
    expect((await repository.get(ID))?.bindingHash).toBe(bindingHash(ID, bindingSecret));
  });
});

describe('openEmbedSession: refusals name the board for framing', () => {
  it.each([
    ['revoked', { revokedAt: NOW }, errors.SessionRevokedError],
    ['expired', { expiresAt: NOW }, errors.SessionExpiredError],
  ] as const)('carries the board on a %s refusal', async (_label, overrides, type) => {
    const { repository } = laggingSessions(stored(overrides));
    const error = await openEmbedSession(deps(repository).deps, TOKEN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect((error as { board?: unknown }).board).toEqual(PUBLIC_BOARD);
  });
});
