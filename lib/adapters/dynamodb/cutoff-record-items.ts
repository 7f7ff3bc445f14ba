import { createHash, randomInt } from 'node:crypto';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import {
  type CutoffEntry,
  type CutoffRecord,
  type CutoffScope,
  cutoffRecordExpiry,
  cutoffScopeKey,
  parseCutoffScopeKey,
} from '#lib/domain/cutoffs';
import type { Item } from './table';

/**
 * A revocation cut-off record (lib/domain/cutoffs.ts) as items of the sessions table. A record is one item
 * under an id no session can have (`cutoff#<sha256 of its scope>`), holding each cut-off as one attribute
 * named after its id (`entry:<id>`), its scope's key, a revision that every write raises, the latest expiry
 * known of the sessions it covers and, once that is all known, the table's TTL attribute. Each record is
 * kept in CUTOFF_COPIES copies, each such an item, so that no item takes every embed load: a write writes
 * every copy (cutoff-records.ts), a load reads one. Here: the ids of the copies, which copy a read takes,
 * and an item read back as a record or written whole.
 */

/** Cut-off records share the table, under ids no session can have (sessions are UUIDs). */
export const CUTOFF_ID_PREFIX = 'cutoff#';

/** Each cut-off of a record is one attribute, named after its entry id. */
export const ENTRY_PREFIX = 'entry:';

/** Raised by every write of a record, which is conditional on the one it read. */
export const REVISION = 'cutoffRevision';

/** The latest expiry (epoch seconds) known of the sessions the record covers. */
export const COVERS_UNTIL = 'cutoffCoversUntil';

/**
 * How many copies of each record are written. DynamoDB serves one item at most 3,000 strongly consistent
 * reads a second (one partition's limit), and the stage's record (like a hot board's) is read by every
 * embed load it could cover: each load reads one copy, so a copy takes 1/8 of the loads. The goal is
 * 10,000 loads a second on one board (docs/scale.md): 1,250 reads a second per copy, under half of what
 * its partition serves, a margin for an uneven spread and for the other items a partition holds; four
 * copies would leave 2,500 of 3,000. Every copy holds every cut-off whose write has returned.
 */
export const CUTOFF_COPIES = 8;

/** On every copy but the first: its number (1 to CUTOFF_COPIES - 1). The change feed reads copy 0 only. */
export const COPY = 'cutoffCopy';

/**
 * On an entry written by a writer that writes every copy itself: a copy that starts from copy 0 leaves it
 * out. Only the entries written before copies existed are copied from copy 0, so an undone entry (a
 * call's write that failed part-way, removed from every copy) is never copied back from a copy 0 read
 * before its removal.
 */
export const EVERY_COPY = 'everyCopy';

/**
 * The id of one copy of a scope's cut-off record. Copy 0 keeps the id records had before copies existed,
 * so a record written then is copy 0 of its scope.
 */
export function cutoffId(scope: CutoffScope, copy = 0): string {
  return cutoffIdOfKey(cutoffScopeKey(scope), copy);
}

export function cutoffIdOfKey(key: string, copy = 0): string {
  const id = `${CUTOFF_ID_PREFIX}${createHash('sha256').update(key).digest('hex')}`;
  return copy === 0 ? id : `${id}#${copy}`;
}

/**
 * The copy an embed load of this session reads: a hash of the session id, so the loads of many sessions
 * spread evenly over the copies, and one session's loads always read the same one.
 */
export function cutoffCopyOf(sessionId: string): number {
  return createHash('sha256').update(sessionId).digest().readUInt32BE(0) % CUTOFF_COPIES;
}

/** A copy for a read that names no single session (a list page, a revoke-all's count): any, at random. */
export function anyCutoffCopy(): number {
  return randomInt(CUTOFF_COPIES);
}

/**
 * The distinct scopes by the id of their record's copy `copy`. A page of sessions names the same few
 * scopes many times over (nine per session), and each id is a SHA-256: each is hashed once.
 */
export function recordIds(
  scopes: readonly CutoffScope[],
  copy: number,
): Map<string, { scope: CutoffScope; key: string }> {
  const byKey = new Map<string, CutoffScope>();
  for (const scope of scopes) byKey.set(cutoffScopeKey(scope), scope);
  const byId = new Map<string, { scope: CutoffScope; key: string }>();
  for (const [key, scope] of byKey)
    byId.set(cutoffIdOfKey(key, copiedKind(scope) ? copy : 0), { scope, key });
  return byId;
}

/**
 * Whether records of this scope's kind have copies: every kind still written. The kinds written only
 * before records were per tenant (`orgUser`, `boardUser`) are never written again: each is copy 0 alone,
 * read there until it expires (one external user's sessions of one organization or board: no load of
 * another user reads it).
 */
export function copiedKind(scope: CutoffScope): boolean {
  return scope.kind !== 'orgUser' && scope.kind !== 'boardUser';
}

/** The records among `items`, each with the scope it was read for (its stored key must match). */
export function recordsOf(
  items: readonly Item[],
  scopes: ReadonlyMap<string, { scope: CutoffScope; key: string }>,
): CutoffRecord[] {
  const records: CutoffRecord[] = [];
  for (const item of items) {
    const read = scopes.get(String(item.id));
    if (!read || item.cutoffScope !== read.key) continue;
    records.push(recordOf(item, read.scope));
  }
  return records;
}

export function recordOf(item: Item, scope: CutoffScope): CutoffRecord {
  const coversUntil = item[COVERS_UNTIL];
  return {
    scope,
    entries: entriesOf(item),
    ...(typeof coversUntil === 'number' ? { coversUntil } : {}),
  };
}

/** The cut-offs a record item holds (without their notices: only the change feed reads those). */
export function entriesOf(item: Item): CutoffEntry[] {
  const entries: CutoffEntry[] = [];
  for (const [name, value] of Object.entries(item)) {
    if (!name.startsWith(ENTRY_PREFIX) || typeof value !== 'object' || value === null) continue;
    const entry = value as Record<string, unknown>;
    if (typeof entry.at !== 'string') continue;
    entries.push({
      id: name.slice(ENTRY_PREFIX.length),
      at: entry.at,
      byUserId: String(entry.byUserId),
      byKeyId: typeof entry.byKeyId === 'string' ? entry.byKeyId : null,
      ...(typeof entry.until === 'number' ? { until: entry.until } : {}),
      // Entries of the records written before records were per tenant name the creators they cover.
      ...(Array.isArray(entry.creators) ? { creators: entry.creators.map(String) } : {}),
    });
  }
  return entries;
}

/** Whether an item of the sessions table is a cut-off record. */
export function isCutoffItem(item: Item): boolean {
  return typeof item.id === 'string' && item.id.startsWith(CUTOFF_ID_PREFIX);
}

/** The stored form of an entry: everything but its id, which names its attribute. */
export function storedEntry(entry: CutoffEntry): Record<string, unknown> {
  const { id: _named, ...stored } = entry;
  return { ...stored, ...(entry.creators !== undefined ? { creators: [...entry.creators] } : {}) };
}

/**
 * The whole item of a record at `revision`, as the writes above leave it: with its TTL once every cut-off
 * in it was counted.
 */
export function cutoffRecordItem(record: CutoffRecord, revision: number): Item {
  const expiry = cutoffRecordExpiry(record);
  const item: Item = {
    id: cutoffId(record.scope),
    cutoffScope: cutoffScopeKey(record.scope),
    [REVISION]: revision,
    ...(record.coversUntil !== undefined ? { [COVERS_UNTIL]: record.coversUntil } : {}),
    ...(expiry !== undefined ? { [TTL_ATTRIBUTE]: expiry } : {}),
  };
  for (const entry of record.entries) item[`${ENTRY_PREFIX}${entry.id}`] = storedEntry(entry);
  return item;
}

/**
 * Copy `copy` of a record as a revoke-all's writes leave it: `cutoffRecordItem`, each entry marked as
 * written into every copy, and the copy's number on every copy but the first.
 */
export function writtenCutoffItem(record: CutoffRecord, revision: number, copy: number): Item {
  const item = cutoffRecordItem(record, revision);
  for (const entry of record.entries) {
    item[`${ENTRY_PREFIX}${entry.id}`] = { ...storedEntry(entry), [EVERY_COPY]: true };
  }
  return copy === 0 ? item : { ...item, id: cutoffId(record.scope, copy), [COPY]: copy };
}

/**
 * The record an item holds when it was written before records were bounded (no revision): its scope read
 * back from its stored key. Undefined for anything else.
 */
export function legacyRecordOf(item: Item): CutoffRecord | undefined {
  if (!isCutoffItem(item) || typeof item[REVISION] === 'number' || typeof item.cutoffScope !== 'string') {
    return undefined;
  }
  const scope = parseCutoffScopeKey(item.cutoffScope);
  return scope && item.id === cutoffId(scope) ? recordOf(item, scope) : undefined;
}
