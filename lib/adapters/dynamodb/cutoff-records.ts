import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import {
  type CutoffRecord,
  type CutoffScope,
  type CutoffWrite,
  cutoffRecordExpiry,
  epochSecondsOf,
  mergeCutoff,
  parseCutoffScopeKey,
} from '#lib/domain/cutoffs';
import { CutoffContentionError } from '#lib/domain/errors';
import type { CutoffCopying, CutoffRecordStore } from '#lib/domain/ports';
import {
  COPY,
  COVERS_UNTIL,
  CUTOFF_COPIES,
  copiedKind,
  cutoffId,
  cutoffRecordItem,
  entriesOf,
  legacyRecordOf,
  REVISION,
} from './cutoff-record-items';
import {
  type CutoffTable,
  copiedFrom,
  ofScope,
  type RecordUpdate,
  readAndUpdateCopy,
} from './cutoff-record-updates';
import { dynamoCall } from './errors';
import { DynamoTable, type Item } from './table';

/**
 * The cut-off record store (the CutoffRecordStore port) in the sessions table: a cut-off merged into every
 * copy of its records, one removed, a record's expiry raised, and the operators' copying and compaction of
 * records written before copies and bounds existed. How a record is laid out as items:
 * cutoff-record-items.ts; how one copy is changed: cutoff-record-updates.ts.
 */

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
  const written = await readAndUpdateCopy(
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
  const removed = await readAndUpdateCopy(
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
  // knows a later one already; only the copies that need it are read again and written. After a round
  // that raised some, the copies are read once more: `copyCutoffRecord` may have made copies meanwhile
  // from copy 0 as it was before the raise. It reads copy 0 again after making them, so whichever of
  // the two writes second sees the other's write.
  const ids = COPY_NUMBERS.map((copy) => cutoffId(scope, copy));
  for (let round = 0; round < EXPIRY_ROUNDS; round++) {
    const items = await table.batchGetItems(ids);
    const lower = COPY_NUMBERS.filter((copy) => {
      const item = items.find((found) => found.id === ids[copy]);
      const known = item?.[COVERS_UNTIL];
      return item !== undefined && (typeof known !== 'number' || known < until);
    });
    if (lower.length === 0) return true;
    const extended = await Promise.all(
      lower.map((copy) =>
        readAndUpdateCopy(
          table,
          scope,
          copy,
          (record) => {
            if (!record || (record.coversUntil !== undefined && record.coversUntil >= until))
              return undefined;
            const longer = { entries: record.entries, coversUntil: until };
            return { set: [], remove: [], coversUntil: until, expiry: cutoffRecordExpiry(longer) };
          },
          { seed: false },
        ),
      ),
    );
    if (extended.includes('contended')) return false;
  }
  return false;
}

/** Rounds of raising a record's copies, each read again after it (`extendCutoffRecordExpiry`). */
const EXPIRY_ROUNDS = 3;

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
  const items = await table.batchGetItems(ids);
  const present = new Set(items.map((item) => String(item.id)));
  const missing = COPY_NUMBERS.filter((copy) => copy > 0 && !present.has(ids[copy] as string));
  const done = await Promise.all([
    ...missing.map((copy) => readAndUpdateCopy(table, scope, copy, () => undefined, { seed: true })),
    ...completeCutoffCopies(table, scope, items, now),
  ]);
  if (done.includes('contended')) return false;
  if (missing.length > 0) {
    // Copy 0 read again: a raise of its expiry that read the copies before these were made raised copy 0
    // alone (`extendCutoffRecordExpiry`), and the new copies may hold the expiry from before it.
    const [primary] = await table.batchGetItems([cutoffId(scope)]);
    const raised = primary?.[COVERS_UNTIL];
    if (typeof raised === 'number' && !(await extendCutoffRecordExpiry(table, scope, raised))) return false;
  }
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
 * The cut-off record writes, in the sessions table: revoke-all's and the operators'. Every function reads
 * sessions with their cut-offs (DynamoSessionRepository); only these two write them.
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
      batchGetItems: (ids) => this.batchGetAll(ids.map((id) => ({ id }))),
    };
  }
}
