/**
 * Which copy of the cut-off records a read of sessions reads (docs/scale.md#copies-of-a-record), across
 * the upgrade to copies. The version before copies wrote each record as one item, copy 0, and every
 * write since writes every copy, copy 0 included: copy 0 holds every cut-off any version wrote, the
 * others only those written since they exist. A session is covered only by cut-offs written after it
 * was created, so only a session created before the upgrade can be covered by a record that is still
 * copy 0 alone: a session stored since records the copy its loads read (`readsCutoffCopy`, its id's
 * hash, so loads spread over the copies), and one stored before, which has no such attribute, reads
 * copy 0. Those die within their lifetime.
 */
import type { StoredSession } from '#lib/domain/session';
import { anyCutoffCopy, CUTOFF_COPIES, cutoffCopyOf } from './cutoff-record-items';
import type { Item } from './table';

/** The attribute of a session item that names the copy its loads read; absent on sessions stored before. */
export const READS_CUTOFF_COPY = 'readsCutoffCopy';

/** The copy a session being stored now records: the one its id's hash picks. */
export function cutoffCopyToRecord(sessionId: string): number {
  return cutoffCopyOf(sessionId);
}

/**
 * The copy to read for these sessions: one session (an embed load, a retrieve) reads the copy it
 * recorded; a page reads any copy when each of its sessions recorded one. A session that recorded none
 * (stored before copies), or one no longer written (a copy number at or above CUTOFF_COPIES), reads
 * copy 0, and so does a page holding one.
 */
export function cutoffCopyRead(sessions: ReadonlyArray<Pick<StoredSession, 'readsCutoffCopy'>>): number {
  const recorded = sessions.map(({ readsCutoffCopy: copy }) =>
    copy !== undefined && Number.isInteger(copy) && copy >= 0 && copy < CUTOFF_COPIES ? copy : undefined,
  );
  if (recorded.includes(undefined)) return 0;
  const [only] = recorded;
  return recorded.length === 1 && only !== undefined ? only : anyCutoffCopy();
}

/** The copy a session's loads read, as stored; nothing for a session stored before it was recorded. */
export function readsCutoffCopyOf(item: Item): Pick<StoredSession, 'readsCutoffCopy'> {
  const copy = item[READS_CUTOFF_COPY];
  return typeof copy === 'number' ? { readsCutoffCopy: copy } : {};
}
