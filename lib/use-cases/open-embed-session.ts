import type { Board } from '#lib/domain/board';
import { hashCredential, isSessionTokenFormat } from '#lib/domain/credentials';
import {
  EmbeddedBoardGoneError,
  InvalidTokenError,
  MissingTokenError,
  SessionExpiredError,
  SessionRevokedError,
} from '#lib/domain/errors';
import type { BoardRepository, Clock, SessionRepository, Sleep, TokenMatch } from '#lib/domain/ports';
import { type StoredSession, sessionStatus } from '#lib/domain/session';

/** What the embed page may show: the session without its token hash, and its board. */
export interface EmbedView {
  session: Omit<StoredSession, 'tokenHash'>;
  board: Board;
}

export interface OpenEmbedSessionDeps {
  sessions: SessionRepository;
  boards: BoardRepository;
  clock: Clock;
  sleep: Sleep;
  /**
   * Waits before re-reading a token that was not found. The token GSI is eventually consistent, so a
   * session created a moment ago may not be visible yet; an unknown token costs these delays in total.
   */
  missRetryDelaysMs: readonly number[];
}

/** Retry schedule used in production: 0.7 s in all, well beyond typical GSI propagation. */
export const DEFAULT_MISS_RETRY_DELAYS_MS = [100, 200, 400] as const;

/**
 * Resolves an embed token to a usable session. A malformed token is refused without touching DynamoDB.
 * A valid one costs three reads: the token index (which only says where the session is), then, at once,
 * the session itself read consistently (so a revocation applies from the very next load) and its board.
 * Expiry is checked here because DynamoDB TTL deletes expired items only eventually.
 */
export async function openEmbedSession(
  deps: OpenEmbedSessionDeps,
  token: string | undefined,
): Promise<EmbedView> {
  if (token === undefined || token === '') throw new MissingTokenError();
  if (!isSessionTokenFormat(token)) throw new InvalidTokenError();

  const tokenHash = hashCredential(token);
  const match = await lookupWithRetries(deps, tokenHash);
  if (!match) throw new InvalidTokenError();

  const [stored, board] = await Promise.all([deps.sessions.get(match.id), deps.boards.get(match.boardId)]);
  // Deleted by its TTL since the index was read, or an index entry that is not this token's after all.
  if (!stored || stored.tokenHash !== tokenHash) throw new InvalidTokenError();

  const status = sessionStatus(stored, deps.clock.now());
  if (status === 'revoked') throw new SessionRevokedError();
  if (status === 'expired') throw new SessionExpiredError();
  if (!board) throw new EmbeddedBoardGoneError();

  const { tokenHash: _hash, ...session } = stored;
  return { session, board };
}

async function lookupWithRetries(
  deps: OpenEmbedSessionDeps,
  tokenHash: string,
): Promise<TokenMatch | undefined> {
  let match = await deps.sessions.lookupToken(tokenHash);
  for (const delay of deps.missRetryDelaysMs) {
    if (match) break;
    await deps.sleep(delay);
    match = await deps.sessions.lookupToken(tokenHash);
  }
  return match;
}
