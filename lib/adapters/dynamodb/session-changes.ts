import type { CutoffEntry, CutoffNotice } from '#lib/domain/cutoffs';
import { COPY, ENTRY_PREFIX, entriesOf, isCutoffItem } from './cutoff-record-items';
import type { Item } from './table';

/**
 * What the sessions table's change feed reads of a cut-off record's image: its entries with the notices
 * that a revoke-all call's last write carries (reads elsewhere take entries without them).
 */

/** A stored entry's notice (see CutoffEntry), when it carries a well-formed one. */
function noticeOf(value: unknown): { notice: CutoffNotice } | undefined {
  const notice = value as Partial<Record<keyof CutoffNotice, unknown>> | undefined;
  if (typeof notice !== 'object' || notice === null) return undefined;
  const { scope, revoked, writtenAt } = notice;
  if (typeof revoked !== 'number' || typeof writtenAt !== 'string' || typeof scope !== 'object' || !scope)
    return undefined;
  const { userId, boardId } = scope as Record<string, unknown>;
  return {
    notice: {
      scope: {
        ...(typeof userId === 'string' ? { userId } : {}),
        ...(typeof boardId === 'string' ? { boardId } : {}),
      },
      revoked,
      writtenAt,
    },
  };
}

/**
 * The cut-off entries an item of the table holds, with their notices; none when it is not a cut-off record.
 */
export function cutoffEntriesOf(item: Item): CutoffEntry[] {
  // The other copies hold the same cut-offs: one call is one event and one fan-out, from copy 0's.
  if (!isCutoffItem(item) || item[COPY] !== undefined) return [];
  return entriesOf(item).map((entry) => {
    const stored = item[`${ENTRY_PREFIX}${entry.id}`] as Record<string, unknown>;
    return { ...entry, ...(noticeOf(stored.notice) ?? {}) };
  });
}
