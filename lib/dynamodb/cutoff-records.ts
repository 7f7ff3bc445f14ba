/**
 * Revocation cut-off records in the sessions table (lib/domain/cutoffs.ts): how a record is stored, read
 * and written. A record is one item under an id no session can have (`cutoff#<sha256 of its scope>`),
 * holding each cut-off as one attribute named after its id (`entry:<id>`), its scope's key, a revision
 * that every write raises (writes are conditional on the revision they read, so two writers never lose
 * each other's cut-off), the latest expiry known of the sessions it covers and, once that is all known,
 * the table's TTL attribute. Each record is kept in CUTOFF_COPIES copies, each such an item, so that no
 * item takes every embed load: a write writes every copy, a load reads one. The readers (the embed page's
 * bundle among them) use the functions here that read; only the functions that own a write bundle the
 * rest.
 */
import { createHash, randomInt } from 'node:crypto';
import { type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import {
  type CutoffEntry,
  type CutoffNotice,
  type CutoffRecord,
  type CutoffScope,
  type CutoffWrite,
  cutoffRecordExpiry,
  cutoffScopeKey,
  epochSecondsOf,
  mergeCutoff,
  parseCutoffScopeKey,
} from '#lib/domain/cutoffs';
import { CutoffContentionError } from '#lib/domain/errors';
import type { CutoffCopying, CutoffRecordStore } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { DynamoTable, type Item } from './table';

/** Cut-off records share the table, under ids no session can have (sessions are UUIDs). */
export const CUTOFF_ID_PREFIX = 'cutoff#';
/** Each cut-off of a record is one attribute, named after its entry id. */
const ENTRY_PREFIX = 'entry:';
/** Raised by every write of a record, which is conditional on the one it read. */
const REVISION = 'cutoffRevision';
/** The latest expiry (epoch seconds) known of the sessions the record covers. */
const COVERS_UNTIL = 'cutoffCoversUntil';
/**
 * Times one write reads a record again and merges anew when another write reached it first. Each try is
 * one read and one write, a few milliseconds: eight tries outlast any burst but a flood of calls on one
 * selection, which then gets a retryable 503.
 */
export const CUTOFF_WRITE_TRIES = 8;
/**
 * Attributes one update removes at most: its expression stays far below DynamoDB's 4 KB. Only a record
 * written before records were bounded can hold more entries than this; it shrinks over a few updates.
 */
const REMOVALS_PER_UPDATE = 100;

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
const COPY = 'cutoffCopy';
/**
 * On an entry written by a writer that writes every copy itself: a copy that starts from copy 0 leaves it
 * out. Only the entries written before copies existed are copied from copy 0, so an undone entry (a
 * call's write that failed part-way, removed from every copy) is never copied back from a copy 0 read
 * before its removal.
 */
const EVERY_COPY = 'everyCopy';

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
function copiedKind(scope: CutoffScope): boolean {
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

function recordOf(item: Item, scope: CutoffScope): CutoffRecord {
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
 * Only the change feed reads notices: the page's reads (entriesOf) leave their parsing out of its bundle.
 */
export function cutoffEntriesOf(item: Item): CutoffEntry[] {
  // The other copies hold the same cut-offs: one call is one event and one fan-out, from copy 0's.
  if (!isCutoffItem(item) || item[COPY] !== undefined) return [];
  return entriesOf(item).map((entry) => {
    const stored = item[`${ENTRY_PREFIX}${entry.id}`] as Record<string, unknown>;
    return { ...entry, ...(noticeOf(stored.notice) ?? {}) };
  });
}

/** The stored form of an entry: everything but its id, which names its attribute. */
function storedEntry(entry: CutoffEntry): Record<string, unknown> {
  const { id: _named, ...stored } = entry;
  return { ...stored, ...(entry.creators !== undefined ? { creators: [...entry.creators] } : {}) };
}

/** What sends a record's reads and writes: the table's document client. */
export interface CutoffTable {
  db: DynamoDBDocumentClient;
  tableName: string;
  /** The items with these ids as they are now (strongly consistent); missing ones left out. */
  readItems(ids: readonly string[]): Promise<Item[]>;
}

/** A change of a record from the state it was read in: what to set, what to remove. */
interface RecordChange {
  /** Entries written whole (the write's own). */
  set: CutoffEntry[];
  /** The id of the entry of `set` that its writer writes into every copy (`EVERY_COPY`). */
  everyCopy?: string;
  /**
   * Entries of the record whose latest known expiry changed (a dropped cut-off's sessions became theirs):
   * only that attribute is written, so nothing else of them (a notice) is touched.
   */
  until?: Array<{ id: string; until: number | undefined }>;
  remove: string[];
  coversUntil: number | undefined;
  expiry: number | undefined;
}

/**
 * Applies `change` to the record `item` (undefined: none yet) of `scope` as one update conditional on
 * the revision read, then the removals that did not fit, each on the revision before it. False when
 * another write reached the record first (nothing of this change was written).
 */
async function applyChange(
  table: CutoffTable,
  scope: CutoffScope,
  copy: number,
  item: Item | undefined,
  change: RecordChange,
): Promise<boolean> {
  const revision = typeof item?.[REVISION] === 'number' ? (item[REVISION] as number) : undefined;
  const [first = [], ...rest] = chunks(change.remove, REMOVALS_PER_UPDATE);
  const names: Record<string, string> = { '#rev': REVISION, '#ttl': TTL_ATTRIBUTE };
  const values: Record<string, unknown> = { ':scope': cutoffScopeKey(scope), ':next': (revision ?? 0) + 1 };
  const sets = ['cutoffScope = :scope', '#rev = :next'];
  if (copy > 0) {
    names['#copy'] = COPY;
    values[':copy'] = copy;
    sets.push('#copy = :copy');
  }
  change.set.forEach((entry, i) => {
    names[`#s${i}`] = `${ENTRY_PREFIX}${entry.id}`;
    values[`:s${i}`] = {
      ...storedEntry(entry),
      ...(entry.id === change.everyCopy ? { [EVERY_COPY]: true } : {}),
    };
    sets.push(`#s${i} = :s${i}`);
  });
  (change.until ?? []).forEach(({ id, until }, i) => {
    names[`#u${i}`] = `${ENTRY_PREFIX}${id}`;
    names['#until'] = 'until';
    if (until === undefined) return;
    values[`:u${i}`] = until;
    sets.push(`#u${i}.#until = :u${i}`);
  });
  if (change.coversUntil !== undefined) {
    names['#cu'] = COVERS_UNTIL;
    values[':cu'] = change.coversUntil;
    sets.push('#cu = :cu');
  }
  const removes = first.map((id, i) => {
    names[`#r${i}`] = `${ENTRY_PREFIX}${id}`;
    return `#r${i}`;
  });
  (change.until ?? []).forEach(({ until }, i) => {
    if (until === undefined) removes.push(`#u${i}.#until`);
  });
  // The record expires with its sessions once each of its cut-offs was counted; never before.
  if (change.expiry !== undefined) {
    values[':ttl'] = change.expiry;
    sets.push('#ttl = :ttl');
  } else {
    removes.push('#ttl');
  }
  // The record as it was read: none yet, one written before revisions, or the revision read.
  if (revision !== undefined) values[':rev'] = revision;
  const condition =
    item === undefined
      ? 'attribute_not_exists(id)'
      : revision === undefined
        ? 'attribute_exists(id) AND attribute_not_exists(#rev)'
        : '#rev = :rev';
  const written = await conditional(table, {
    Key: { id: cutoffId(scope, copy) },
    UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  });
  if (!written) return false;
  // Only a record from before records were bounded has more to remove: the next writer finishes what a
  // lost race leaves, and every entry removed is covered by a later one the record keeps.
  let at = (revision ?? 0) + 1;
  for (const ids of rest) {
    const more: Record<string, string> = { '#rev': REVISION };
    ids.forEach((id, i) => {
      more[`#r${i}`] = `${ENTRY_PREFIX}${id}`;
    });
    const ok = await conditional(table, {
      Key: { id: cutoffId(scope, copy) },
      UpdateExpression: `SET #rev = :next REMOVE ${ids.map((_, i) => `#r${i}`).join(', ')}`,
      ConditionExpression: '#rev = :rev',
      ExpressionAttributeNames: more,
      ExpressionAttributeValues: { ':rev': at, ':next': at + 1 },
    });
    if (!ok) break;
    at += 1;
  }
  return true;
}

async function conditional(
  table: CutoffTable,
  input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>,
): Promise<boolean> {
  try {
    await dynamoCall(() => table.db.send(new UpdateCommand({ TableName: table.tableName, ...input })));
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** What one copy's update did: wrote it, found nothing to write, or kept losing to other writes. */
type RecordUpdate = 'written' | 'unchanged' | 'contended';

/**
 * Reads copy `copy` of the record, computes its change, writes it conditionally; again from the read when
 * another write came first, up to CUTOFF_WRITE_TRIES times. `changeOf` answers undefined when the record
 * needs no change. With `seed`, a copy that does not exist yet starts from copy 0 as it is (read in the
 * same request): a record written before copies existed, or a write that reached copy 0 and not this one
 * (its answer an error, the call retried), reaches every copy whole.
 */
async function updateRecord(
  table: CutoffTable,
  scope: CutoffScope,
  copy: number,
  changeOf: (record: CutoffRecord | undefined, item: Item | undefined) => RecordChange | undefined,
  options: { seed: boolean },
): Promise<RecordUpdate> {
  const id = cutoffId(scope, copy);
  const primaryId = cutoffId(scope);
  const seeds = options.seed && copy > 0;
  for (let tries = 0; tries < CUTOFF_WRITE_TRIES; tries++) {
    const items = await table.readItems(seeds ? [id, primaryId] : [id]);
    const item = ofScope(
      items.find((found) => found.id === id),
      scope,
    );
    const primary =
      seeds && !item
        ? ofScope(
            items.find((found) => found.id === primaryId),
            scope,
          )
        : undefined;
    const base = item ?? primary;
    const record = base && (item ? recordOf(item, scope) : primary && copiedFrom(primary, scope));
    const change = changeOf(record, base);
    // Copy 0 holds nothing from before copies existed: the new copy starts empty, as a copy of its own.
    if (primary && record?.entries.length === 0 && !change) return 'unchanged';
    // A copy 0 from before records were bounded seeds another only through a write, whose merge bounds
    // what it copies; otherwise it is compacted first (`replaceLegacyCutoffRecord`).
    if (primary && !change && legacyRecordOf(primary)) return 'contended';
    if (primary && record) {
      // The copy is created whole: copy 0's cut-offs with this change applied.
      if (await applyChange(table, scope, copy, undefined, seededChange(record, primary, change)))
        return 'written';
      continue;
    }
    if (!change) return 'unchanged';
    if (await applyChange(table, scope, copy, item, change)) return 'written';
  }
  return 'contended';
}

/** What a new copy takes from copy 0 (`primary`): the entries written before copies existed. */
function copiedFrom(primary: Item, scope: CutoffScope): CutoffRecord {
  const record = recordOf(primary, scope);
  const entries = record.entries.filter((entry) => {
    const stored = primary[`${ENTRY_PREFIX}${entry.id}`] as Record<string, unknown>;
    return stored[EVERY_COPY] !== true;
  });
  return { ...record, entries };
}

/** The item, when it is the record of `scope`: a record under its id for another scope is a hash collision. */
function ofScope(found: Item | undefined, scope: CutoffScope): Item | undefined {
  if (found && found.cutoffScope !== cutoffScopeKey(scope))
    throw new Error('a cut-off record id names two scopes');
  return found;
}

/** The change that creates a copy whole from copy 0's `record` (item `primary`) and `change` on it. */
function seededChange(record: CutoffRecord, primary: Item, change: RecordChange | undefined): RecordChange {
  const entries = new Map(record.entries.map((entry) => [entry.id, entry]));
  for (const id of change?.remove ?? []) entries.delete(id);
  for (const { id, until } of change?.until ?? []) {
    const entry = entries.get(id);
    if (!entry) continue;
    const { until: _was, ...rest } = entry;
    entries.set(id, until === undefined ? rest : { ...rest, until });
  }
  for (const entry of change?.set ?? []) entries.set(entry.id, entry);
  const ttl = primary[TTL_ATTRIBUTE];
  return {
    set: [...entries.values()],
    ...(change?.everyCopy !== undefined ? { everyCopy: change.everyCopy } : {}),
    remove: [],
    coversUntil: change ? change.coversUntil : record.coversUntil,
    expiry: change ? change.expiry : typeof ttl === 'number' ? ttl : undefined,
  };
}

/**
 * Waits for every one of `writes` (the copies of a record, the records of a call) to settle, so nothing of
 * a call is still in flight when it answers; then fails with the first failure, if any (a retry
 * converges: every copy merges the same entry).
 */
async function settleAll(writes: ReadonlyArray<Promise<unknown>>): Promise<void> {
  const results = await Promise.allSettled(writes);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}

const COPY_NUMBERS = Array.from({ length: CUTOFF_COPIES }, (_, copy) => copy);

/** Merges `write` into the record of `scope` (`mergeCutoff`), conditionally; see `writeCutoff`. */
export async function writeCutoffRecord(
  table: CutoffTable,
  scope: CutoffScope,
  write: CutoffWrite,
): Promise<void> {
  await settleAll(COPY_NUMBERS.map((copy) => writeCutoffCopy(table, scope, copy, write)));
}

async function writeCutoffCopy(
  table: CutoffTable,
  scope: CutoffScope,
  copy: number,
  write: CutoffWrite,
): Promise<void> {
  const written = await updateRecord(
    table,
    scope,
    copy,
    (record, item) => {
      const merged = mergeCutoff(record, write);
      const expiry = cutoffRecordExpiry(merged);
      const unchanged =
        merged.written.length === 0 &&
        merged.dropped.length === 0 &&
        merged.coversUntil === record?.coversUntil &&
        expiry === (typeof item?.[TTL_ATTRIBUTE] === 'number' ? item[TTL_ATTRIBUTE] : undefined);
      if (unchanged) return undefined;
      return {
        set: merged.written.filter((entry) => entry.id === write.entry.id),
        everyCopy: write.entry.id,
        until: merged.written
          .filter((entry) => entry.id !== write.entry.id)
          .map((entry) => ({ id: entry.id, until: entry.until })),
        remove: merged.dropped,
        coversUntil: merged.coversUntil,
        expiry,
      };
    },
    { seed: true },
  );
  if (written === 'contended') throw new CutoffContentionError();
}

/** Removes one entry from every copy of the record of `scope`, where it is; see `removeCutoffEntry`. */
export async function removeCutoffRecordEntry(
  table: CutoffTable,
  scope: CutoffScope,
  entryId: string,
  now: string,
): Promise<void> {
  await settleAll(COPY_NUMBERS.map((copy) => removeCutoffCopyEntry(table, scope, copy, entryId, now)));
}

async function removeCutoffCopyEntry(
  table: CutoffTable,
  scope: CutoffScope,
  copy: number,
  entryId: string,
  now: string,
): Promise<void> {
  const removed = await updateRecord(
    table,
    scope,
    copy,
    (record) => {
      if (!record?.entries.some((entry) => entry.id === entryId)) return undefined;
      const entries = record.entries.filter((entry) => entry.id !== entryId);
      // A record left with nothing covers nothing: it may go at once.
      const expiry =
        entries.length === 0
          ? epochSecondsOf(now)
          : cutoffRecordExpiry({
              entries,
              ...(record.coversUntil !== undefined ? { coversUntil: record.coversUntil } : {}),
            });
      return { set: [], remove: [entryId], coversUntil: record.coversUntil, expiry };
    },
    { seed: false },
  );
  if (removed === 'contended') throw new CutoffContentionError();
}

/**
 * Raises the known expiry of every copy of the record to `until` when lower (and its TTL, when every
 * cut-off it holds was counted), so no copy expires before the sessions it covers; a copy that is gone
 * stays gone. False when other writes kept reaching a copy first.
 */
export async function extendCutoffRecordExpiry(
  table: CutoffTable,
  scope: CutoffScope,
  until: number,
): Promise<boolean> {
  // Every copy in one read: the logouts' pass raises expiries step after step, and mostly every copy
  // knows a later one already; only the copies that need it are read again and written.
  const ids = COPY_NUMBERS.map((copy) => cutoffId(scope, copy));
  const items = await table.readItems(ids);
  const lower = COPY_NUMBERS.filter((copy) => {
    const item = items.find((found) => found.id === ids[copy]);
    const known = item?.[COVERS_UNTIL];
    return item !== undefined && (typeof known !== 'number' || known < until);
  });
  const extended = await Promise.all(
    lower.map((copy) =>
      updateRecord(
        table,
        scope,
        copy,
        (record) => {
          if (!record || (record.coversUntil !== undefined && record.coversUntil >= until)) return undefined;
          const longer = { entries: record.entries, coversUntil: until };
          return { set: [], remove: [], coversUntil: until, expiry: cutoffRecordExpiry(longer) };
        },
        { seed: false },
      ),
    ),
  );
  return extended.every((done) => done !== 'contended');
}

/**
 * Creates the copies a record written before copies existed lacks (it is copy 0 alone), each with the
 * cut-offs copy 0 holds from before copies existed; a copy 0 holding none needs no copy made. A copy that
 * exists already held them when it was made (its first write started from them), but not what a version
 * without copies wrote to copy 0 since (during a deploy, beside this version): that is merged into it as
 * the write would have been (`completeCutoffCopies`). Answers how many copies it created or completed;
 * false when other writes kept reaching one first, or when copy 0 is still unbounded (compacted first:
 * `replaceLegacyCutoffRecord`).
 */
export async function copyCutoffRecord(
  table: CutoffTable,
  scope: CutoffScope,
  now: string,
): Promise<number | false> {
  const ids = COPY_NUMBERS.map((copy) => cutoffId(scope, copy));
  const items = await table.readItems(ids);
  const present = new Set(items.map((item) => String(item.id)));
  const missing = COPY_NUMBERS.filter((copy) => copy > 0 && !present.has(ids[copy] as string));
  const done = await Promise.all([
    ...missing.map((copy) => updateRecord(table, scope, copy, () => undefined, { seed: true })),
    ...completeCutoffCopies(table, scope, items, now),
  ]);
  if (done.includes('contended')) return false;
  return done.filter((done) => done === 'written').length;
}

/**
 * Merges into each existing copy (but copy 0) of the record `items` are read from the cut-offs copy 0
 * holds from writers that wrote copy 0 alone and that the copy lacks, one write of `writeCutoffCopy`
 * each: the same merge, bound and expiry as a revoke-all's.
 */
function completeCutoffCopies(
  table: CutoffTable,
  scope: CutoffScope,
  items: readonly Item[],
  now: string,
): Array<Promise<RecordUpdate>> {
  const primary = ofScope(
    items.find((item) => item.id === cutoffId(scope)),
    scope,
  );
  if (!primary || legacyRecordOf(primary)) return [];
  const earlier = copiedFrom(primary, scope).entries;
  return items.flatMap((item) => {
    const copy = typeof item[COPY] === 'number' ? (item[COPY] as number) : 0;
    if (copy === 0 || ofScope(item, scope) === undefined) return [];
    const held = new Set(entriesOf(item).map((entry) => entry.id));
    const lacking = earlier.filter((entry) => !held.has(entry.id));
    if (lacking.length === 0) return [];
    return [
      (async (): Promise<RecordUpdate> => {
        try {
          for (const entry of lacking) await writeCutoffCopy(table, scope, copy, { entry, now });
          return 'written';
        } catch (error) {
          if (error instanceof CutoffContentionError) return 'contended';
          throw error;
        }
      })(),
    ];
  });
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

/**
 * Replaces a record written before records were bounded by `record` (each entry counted, the record
 * expiring at `coversUntil`), as one put conditional on the record being unchanged in that respect (it
 * still exists, without a revision): false when a revoke-all wrote it since (that write keeps it bounded).
 */
export async function replaceLegacyCutoffRecord(
  table: Pick<CutoffTable, 'db' | 'tableName'>,
  record: CutoffRecord & { coversUntil: number },
): Promise<boolean> {
  const item = cutoffRecordItem(record, 1);
  try {
    await dynamoCall(() =>
      table.db.send(
        new PutCommand({
          TableName: table.tableName,
          Item: item,
          ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(#rev)',
          ExpressionAttributeNames: { '#rev': REVISION },
        }),
      ),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * The cut-off record writes, in the sessions table: a class of its own, beside DynamoSessionRepository's,
 * so that only the functions that write cut-offs (revoke-all, the admin CLI) bundle the merge.
 */
export class DynamoCutoffRecords extends DynamoTable implements CutoffRecordStore {
  async writeCutoff(scopes: readonly CutoffScope[], write: CutoffWrite): Promise<void> {
    await settleAll(scopes.map((scope) => writeCutoffRecord(this.table(), scope, write)));
  }

  async removeCutoffEntry(scopes: readonly CutoffScope[], entryId: string, now: string): Promise<void> {
    await settleAll(scopes.map((scope) => removeCutoffRecordEntry(this.table(), scope, entryId, now)));
  }

  async copyCutoffs(now: string): Promise<CutoffCopying> {
    // Operators only: a scan of the records' copies 0 (every record has one; only they lack `cutoffCopy`).
    const items = await this.scanAll({
      FilterExpression: 'attribute_exists(cutoffScope) AND attribute_not_exists(#copy)',
      ExpressionAttributeNames: { '#copy': COPY },
      ProjectionExpression: 'id, cutoffScope',
    });
    const done: CutoffCopying = { records: 0, copiesWritten: 0, unfinished: 0 };
    for (const item of items) {
      const scope = typeof item.cutoffScope === 'string' ? parseCutoffScopeKey(item.cutoffScope) : undefined;
      if (!scope || item.id !== cutoffId(scope) || !copiedKind(scope)) continue;
      done.records += 1;
      const written = await copyCutoffRecord(this.table(), scope, now);
      if (written === false) done.unfinished += 1;
      else done.copiesWritten += written;
    }
    return done;
  }

  async legacyCutoffs(): Promise<CutoffRecord[]> {
    // Operators only: a scan of the records that have no revision, which only writes from before
    // records were bounded left.
    const items = await this.scanAll({
      FilterExpression: 'attribute_exists(cutoffScope) AND attribute_not_exists(#rev)',
      ExpressionAttributeNames: { '#rev': REVISION },
    });
    return items.flatMap((item) => legacyRecordOf(item) ?? []);
  }

  replaceLegacyCutoff(record: CutoffRecord & { coversUntil: number }): Promise<boolean> {
    return replaceLegacyCutoffRecord(this.table(), record);
  }

  /** The table as the record writes need it: its client, and a consistent read of one item. */
  private table(): CutoffTable {
    return {
      db: this.db,
      tableName: this.tableName,
      readItems: (ids) => this.batchGetAll(ids.map((id) => ({ id }))),
    };
  }
}
