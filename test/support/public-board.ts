import type { Board } from '#lib/domain/board';
import type { LocalRuntime } from '#local/runtime';
import { putBoard } from './local-runtime';

/**
 * Creates or replaces a PUBLIC board of `orgId` straight in the runtime's table, as an operator would:
 * no name, no application and no embed origins unless `fields` give them.
 */
export function putPublicBoard(
  runtime: LocalRuntime,
  boardId: string,
  orgId: string,
  fields: Partial<Omit<Board, 'boardId' | 'orgId' | 'visibility'>> = {},
): Promise<void> {
  return putBoard(runtime, { boardId, orgId, visibility: 'PUBLIC', name: null, ...fields });
}
