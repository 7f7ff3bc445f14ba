import type { Board } from '#lib/domain/board';

/**
 * A board as the provisioning API shows it: every field present, null (or an empty list) where the board
 * has none of its own, and who changed it last.
 */
export interface BoardView {
  boardId: string;
  orgId: string;
  visibility: string;
  name: string | null;
  embedOrigins: readonly string[];
  appUrl: string | null;
  logoutUrl: string | null;
  updatedBy: string | null;
  updatedAt: string | null;
}

export function boardView(board: Board): BoardView {
  return {
    boardId: board.boardId,
    orgId: board.orgId,
    visibility: board.visibility,
    name: board.name,
    embedOrigins: board.embedOrigins ?? [],
    appUrl: board.appUrl ?? null,
    logoutUrl: board.logoutUrl ?? null,
    updatedBy: board.updatedBy ?? null,
    updatedAt: board.updatedAt ?? null,
  };
}
