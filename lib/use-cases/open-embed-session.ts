import type { Board } from '#lib/domain/board';
import { hashCredential, isSessionTokenFormat } from '#lib/domain/credentials';
import {
  EmbeddedBoardGoneError,
  InvalidTokenError,
  MissingTokenError,
  SessionExpiredError,
} from '#lib/domain/errors';
import type { BoardRepository, Clock, SessionRepository, Sleep } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';

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
 * Resolves an embed token to a usable session. A malformed token is refused without touching DynamoDB;
 * a valid one costs two reads (token GSI, board). Expiry is checked here because DynamoDB TTL deletes
 * expired items only eventually.
 */
export async function openEmbedSession(
  deps: OpenEmbedSessionDeps,
  token: string | undefined,
): Promise<EmbedView> {
  if (token === undefined || token === '') throw new MissingTokenError();
  if (!isSessionTokenFormat(token)) throw new InvalidTokenError();

  const tokenHash = hashCredential(token);
  let stored = await deps.sessions.findByTokenHash(tokenHash);
  for (const delay of deps.missRetryDelaysMs) {
    if (stored) break;
    await deps.sleep(delay);
    stored = await deps.sessions.findByTokenHash(tokenHash);
  }
  if (!stored) throw new InvalidTokenError();

  if (deps.clock.now().getTime() >= Date.parse(stored.expiresAt)) throw new SessionExpiredError();

  const board = await deps.boards.get(stored.boardId);
  if (!board) throw new EmbeddedBoardGoneError();

  const { tokenHash: _hash, ...session } = stored;
  return { session, board };
}
