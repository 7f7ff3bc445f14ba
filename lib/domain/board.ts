/** The one visibility the spec names; any other value (or a missing one) counts as not public. */
export const PUBLIC_VISIBILITY = 'PUBLIC';

/** A board, referenced only: the service knows its id, owner organization, visibility and name. */
export interface Board {
  boardId: string;
  orgId: string;
  visibility: string;
  name: string | null;
  /**
   * The origins allowed to frame this board's embed pages, replacing the stage's default; absent (never
   * empty) when the board has no list of its own.
   */
  embedOrigins?: readonly string[];
  /**
   * The board's own application, which the embed page hands the verified user to with a signed ID token;
   * absent (never empty) when the board has none, and the stage's default (if any) applies.
   */
  appUrl?: string;
  /**
   * Where the board's application receives OpenID Connect Back-Channel Logout requests when one of its
   * sessions is revoked or expires; absent (never empty) when it receives none.
   */
  logoutUrl?: string;
  /** Who last changed the board (an operator: lib/domain/operators.ts) and when; absent on older boards. */
  updatedBy?: string;
  updatedAt?: string;
}

/** True only for a board whose visibility is exactly `PUBLIC`. */
export function isPublicBoard(board: Board): boolean {
  return board.visibility === PUBLIC_VISIBILITY;
}
