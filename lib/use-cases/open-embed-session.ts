import type { Board } from '#lib/domain/board';
import {
  bindingHash,
  hashCredential,
  isBindingSecretFormat,
  isSessionTokenFormat,
  newBindingSecret,
  sameHash,
  sessionIdOfToken,
} from '#lib/domain/credentials';
import {
  EmbeddedBoardGoneError,
  InvalidTokenError,
  MissingTokenError,
  SessionBoundElsewhereError,
  SessionExpiredError,
  SessionRevokedError,
  StorageUnavailableError,
  UnconfirmedBindingError,
} from '#lib/domain/errors';
import type { BoardRepository, Clock, EmbedSessionRepository, RandomSource } from '#lib/domain/ports';
import { type SessionBinding, type StoredSession, sessionStatus } from '#lib/domain/session';

/** What the embed page may show: the session without its token hash or binding hash, and its board. */
export interface EmbedView {
  session: Omit<StoredSession, 'tokenHash' | 'bindingHash'>;
  board: Board;
  /**
   * For a session bound to this browser: the secret the browser's binding cookie must hold, to be (re)set
   * on the response. Absent for every session created without `bindToBrowser`.
   */
  bindingSecret?: string;
}

export interface OpenEmbedSessionDeps {
  sessions: EmbedSessionRepository;
  boards: BoardRepository;
  clock: Clock;
  /** Draws the binding secret of a browser that brings none. */
  random: RandomSource;
}

/**
 * Resolves an embed token to a usable session. A malformed token is refused without touching DynamoDB.
 * A well-formed one costs three reads in two round trips: the session by the id its token derives
 * (`sessionIdOfToken`: one consistent GetItem, so a session created a moment ago opens at once), then, at
 * once, the revocation cut-offs that could cover it (one consistent BatchGetItem, so a revocation or a
 * revoke-all applies from the very next load) and its board. A session created before ids were derived
 * from tokens is found by the token index instead, once: an unknown token costs one GetItem and one Query.
 * Expiry is checked here because DynamoDB TTL deletes expired items only eventually.
 *
 * A `bindToBrowser` session is then checked against `browserSecrets` (the binding cookies the browser
 * sent): its first load binds it with one conditional write, later loads need the secret it was bound to.
 * Revocation and expiry are decided before the binding, so a bound link that was revoked says "revoked".
 *
 * `peek` (HEAD): the same answer without side effects. A link not bound yet stays unbound and no secret is
 * handed out; a bound one still needs the browser's secret.
 */
export async function openEmbedSession(
  deps: OpenEmbedSessionDeps,
  token: string | undefined,
  browserSecrets: readonly string[] = [],
  options: { peek?: boolean } = {},
): Promise<EmbedView> {
  if (token === undefined || token === '') throw new MissingTokenError();
  if (!isSessionTokenFormat(token)) throw new InvalidTokenError();

  const tokenHash = hashCredential(token);
  const found = await findSession(deps, token, tokenHash);
  if (!found) throw new InvalidTokenError();
  const [stored, board] = found;
  // Deleted by its TTL since the index was read, or an index entry that is not this token's after all.
  if (!stored || stored.tokenHash !== tokenHash) throw new InvalidTokenError();

  const now = deps.clock.now();
  const status = sessionStatus(stored, now);
  if (status === 'revoked') throw new SessionRevokedError(board);
  if (status === 'expired') throw new SessionExpiredError(board);
  if (!board) throw new EmbeddedBoardGoneError();

  const { tokenHash: _hash, bindingHash: _binding, ...session } = stored;
  if (options.peek) {
    if (stored.bindToBrowser && stored.bindingHash !== null) checkBinding(stored, board, browserSecrets);
    return { session, board };
  }
  if (!stored.bindToBrowser) {
    await recordOpening(deps, stored, now);
    return { session, board };
  }
  const { secret, boundAt } = await bindToBrowser(deps, stored, board, browserSecrets, now);
  await recordOpening(deps, stored, now);
  return { session: { ...session, boundAt }, board, bindingSecret: secret };
}

/**
 * The first successful load records `openedAt` (the session.opened event); a session that holds it
 * already, as the consistent read just showed, costs no write.
 */
async function recordOpening(deps: OpenEmbedSessionDeps, stored: StoredSession, now: Date): Promise<void> {
  if (typeof stored.openedAt === 'string') return;
  await deps.sessions.markOpened(stored.id, now.toISOString());
}

/**
 * The secret that ties `session` to this browser. Bound already: one of the browser's secrets must be the
 * one it was bound to. Not yet: this load binds it, reusing the browser's secret when it brings one (one
 * cookie then serves every session it binds), and only the winner of concurrent first loads is bound.
 * A bind whose answer was lost is recognised on the re-read (the stored binding is the one this load
 * made); a bind that cannot be confirmed is undone, and should even that fail the browser still gets the
 * secret with the 503, so a binding left behind is this browser's, never one that no browser can open.
 */
async function bindToBrowser(
  deps: OpenEmbedSessionDeps,
  session: StoredSession,
  board: Board,
  browserSecrets: readonly string[],
  now: Date,
): Promise<{ secret: string; boundAt: string | null }> {
  const secrets = browserSecrets.filter(isBindingSecretFormat);
  if (session.bindingHash === null) {
    const secret = secrets[0] ?? newBindingSecret(deps.random);
    const boundAt = now.toISOString();
    const binding = { bindingHash: bindingHash(session.id, secret), boundAt };
    if (await bindOrUndo(deps, session.id, binding, secret)) return { secret, boundAt };
    // Another load bound it first, our own bind landed unanswered, or it was revoked meanwhile: decide
    // on the session as it is now.
    const current = await deps.sessions.get(session.id);
    if (!current) throw new InvalidTokenError();
    if (sessionStatus(current, now) === 'revoked') throw new SessionRevokedError(board);
    if (current.bindingHash !== null && sameHash(current.bindingHash, binding.bindingHash)) {
      return { secret, boundAt: current.boundAt };
    }
    return checkBound(current);
  }
  return checkBound(session);

  function checkBound(stored: StoredSession) {
    return { secret: checkBinding(stored, board, secrets), boundAt: stored.boundAt };
  }
}

/** The browser's secret that a bound session was bound to; refused when the browser holds none of it. */
function checkBinding(stored: StoredSession, board: Board, browserSecrets: readonly string[]): string {
  const secret = browserSecrets
    .filter(isBindingSecretFormat)
    .find((candidate) => sameHash(bindingHash(stored.id, candidate), stored.bindingHash));
  if (secret === undefined) throw new SessionBoundElsewhereError(board);
  return secret;
}

/**
 * Binds, or when storage fails (the write may have landed unanswered) removes this very binding again
 * and answers 503; when the removal fails too, the 503 carries the secret (`UnconfirmedBindingError`).
 */
async function bindOrUndo(
  deps: OpenEmbedSessionDeps,
  sessionId: string,
  binding: SessionBinding,
  secret: string,
): Promise<boolean> {
  try {
    return await deps.sessions.bind(sessionId, binding);
  } catch (error) {
    if (!(error instanceof StorageUnavailableError)) throw error;
    try {
      await deps.sessions.unbind(sessionId, binding.bindingHash);
    } catch (undoError) {
      if (!(undoError instanceof StorageUnavailableError)) throw undoError;
      throw new UnconfirmedBindingError(secret, { cause: error });
    }
    throw error;
  }
}

/**
 * The session a token opens, with the cut-offs that cover it applied, and its board; undefined when the
 * token opens nothing. By the derived id first; by the token index, once, for a session older than that.
 */
async function findSession(
  deps: OpenEmbedSessionDeps,
  token: string,
  tokenHash: string,
): Promise<[StoredSession | undefined, Board | undefined] | undefined> {
  const own = await deps.sessions.get(sessionIdOfToken(token));
  if (own) {
    if (own.tokenHash !== tokenHash) return undefined;
    const [[covered], board] = await Promise.all([
      deps.sessions.applyCutoffs([own]),
      deps.boards.get(own.boardId),
    ]);
    return [covered, board];
  }
  const match = await deps.sessions.lookupToken(tokenHash);
  if (!match) return undefined;
  // The session and the cut-off records that could cover it come in one consistent read.
  return Promise.all([deps.sessions.getCovered(match), deps.boards.get(match.boardId)]);
}
