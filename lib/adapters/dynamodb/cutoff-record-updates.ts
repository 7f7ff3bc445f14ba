import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import { type CutoffEntry, type CutoffRecord, type CutoffScope, cutoffScopeKey } from '#lib/domain/cutoffs';
import {
  COPY,
  COVERS_UNTIL,
  cutoffId,
  ENTRY_PREFIX,
  EVERY_COPY,
  legacyRecordOf,
  REVISION,
  recordOf,
  storedEntry,
} from './cutoff-record-items';
import { dynamoCall } from './errors';
import type { Item } from './table';

/**
 * Changing one copy of a cut-off record: read it, compute the change, write it as one UpdateItem
 * conditional on the revision read (so two writers never lose each other's cut-off), and read again when
 * another write came first. A copy that does not exist yet may start from copy 0.
 */

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

/** What sends a record's reads and writes: the table's document client. */
export interface CutoffTable {
  db: DynamoDBDocumentClient;
  tableName: string;
  /** The items with these ids as they are now (strongly consistent); missing ones left out. */
  batchGetItems(ids: readonly string[]): Promise<Item[]>;
}

/** A change of a record from the state it was read in: what to set, what to remove. */
export interface RecordChange {
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
export async function updateCopyItem(
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
  const written = await conditionalUpdate(table, {
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
    const ok = await conditionalUpdate(table, {
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

async function conditionalUpdate(
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
export type RecordUpdate = 'written' | 'unchanged' | 'contended';

/**
 * Reads copy `copy` of the record, computes its change, writes it conditionally; again from the read when
 * another write came first, up to CUTOFF_WRITE_TRIES times. `changeOf` answers undefined when the record
 * needs no change. With `seed`, a copy that does not exist yet starts from copy 0 as it is (read in the
 * same request): a record written before copies existed, or a write that reached copy 0 and not this one
 * (its answer an error, the call retried), reaches every copy whole.
 */
export async function readAndUpdateCopy(
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
    const items = await table.batchGetItems(seeds ? [id, primaryId] : [id]);
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
      if (await updateCopyItem(table, scope, copy, undefined, seededChange(record, primary, change)))
        return 'written';
      continue;
    }
    if (!change) return 'unchanged';
    if (await updateCopyItem(table, scope, copy, item, change)) return 'written';
  }
  return 'contended';
}

/** What a new copy takes from copy 0 (`primary`): the entries written before copies existed. */
export function copiedFrom(primary: Item, scope: CutoffScope): CutoffRecord {
  const record = recordOf(primary, scope);
  const entries = record.entries.filter((entry) => {
    const stored = primary[`${ENTRY_PREFIX}${entry.id}`] as Record<string, unknown>;
    return stored[EVERY_COPY] !== true;
  });
  return { ...record, entries };
}

/** The item, when it is the record of `scope`: a record under its id for another scope is a hash collision. */
export function ofScope(found: Item | undefined, scope: CutoffScope): Item | undefined {
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
