import { createHash } from 'node:crypto';
import { BatchGetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CUTOFF_COPIES, cutoffCopyOf } from '#lib/adapters/dynamodb/cutoff-record-items';
import { toItem, toStoredSession } from '#lib/adapters/dynamodb/session-items';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import type { StoredSession } from '#lib/domain/session';
import { mockedDocumentClient } from '#test/support/dynamo-mock';
import { storedSession } from '#test/support/fixtures';

/**
 * Which copy of the cut-off records a read of a session reads, across the upgrade to copies: a session
 * stored by a version with copies records the copy its loads read; one stored before (no such attribute)
 * reads copy 0, the only copy the version before copies wrote, and one every write since writes too.
 */
const { ddb, db } = mockedDocumentClient();
const repository = new DynamoSessionRepository(db, 'sessions-t');

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const copyId = (key: unknown[], copy: number) =>
  `cutoff#${sha256(JSON.stringify(key))}${copy === 0 ? '' : `#${copy}`}`;
const CUTOFF_AT = '2026-01-04T00:00:00.000Z';
/** The stage's record as the version before copies wrote it: copy 0 alone, one cut-off of an operator. */
const STAGE_COPY_0 = {
  id: copyId(['stage'], 0),
  cutoffScope: JSON.stringify(['stage']),
  cutoffRevision: 1,
  'entry:old': { at: CUTOFF_AT, byUserId: 'cli:op', byKeyId: null },
};
/** A session id whose loads' hash picks `copy`. */
function idReading(copy: number): string {
  for (let i = 0; ; i++) {
    const id = `3f2c1e0a-0000-4000-8000-${String(i).padStart(12, '0')}`;
    if (cutoffCopyOf(id) === copy) return id;
  }
}
/** A session as the version before copies stored it: its item has no `readsCutoffCopy`. */
function storedBefore(id: string): StoredSession {
  const { readsCutoffCopy: _none, ...item } = toItem(storedSession({ id }));
  return toStoredSession(item);
}
/** A session as this version stores it. */
const storedNow = (id: string): StoredSession => toStoredSession(toItem(storedSession({ id })));
/** Answers every BatchGetItem with the items of `stored` it asks for; returns the keys each read asked for. */
function answerReads(stored: ReadonlyArray<Record<string, unknown>>): () => string[][] {
  ddb.on(BatchGetCommand).callsFake((input) => {
    const keys = (input.RequestItems['sessions-t']?.Keys ?? []) as Array<{ id: string }>;
    const ids = new Set(keys.map(({ id }) => id));
    return { Responses: { 'sessions-t': stored.filter((item) => ids.has(String(item.id))) } };
  });
  return () =>
    ddb
      .commandCalls(BatchGetCommand)
      .map((call) =>
        ((call.args[0].input.RequestItems?.['sessions-t']?.Keys ?? []) as Array<{ id: string }>).map(
          ({ id }) => id,
        ),
      );
}
const OTHER_COPIES = Array.from({ length: CUTOFF_COPIES - 1 }, (_, i) => i + 1);

describe('a session stored before cut-off records had copies', () => {
  it.each(OTHER_COPIES)(
    'stays revoked by a record at copy 0 alone when its id picks copy %i (an embed load)',
    async (copy) => {
      const reads = answerReads([STAGE_COPY_0]);
      const [covered] = await repository.applyCutoffs([storedBefore(idReading(copy))]);
      expect(covered).toMatchObject({ revokedAt: CUTOFF_AT, revokedByUserId: 'cli:op' });
      expect(reads()[0]).toContain(copyId(['stage'], 0));
      expect(reads()[0]).not.toContain(copyId(['stage'], copy));
    },
  );

  it('stays revoked when found through the token index (sessions older than derived ids)', async () => {
    const old = storedBefore(idReading(3));
    const { readsCutoffCopy: _none, ...item } = toItem(old);
    ddb.on(QueryCommand).resolves({ Items: [item] });
    answerReads([item, STAGE_COPY_0]);
    const match = await repository.lookupToken(old.tokenHash);
    expect(match).toBeDefined();
    await expect(repository.getCovered(match ?? ({} as never))).resolves.toMatchObject({
      revokedAt: CUTOFF_AT,
    });
  });

  it('stays revoked on a page of sessions, which then reads copy 0 of every record', async () => {
    // A page mixing sessions stored before and since: copy 0 holds what every version wrote.
    const page = [storedNow(idReading(2)), storedBefore(idReading(5)), storedNow(idReading(7))];
    for (let call = 0; call < 16; call++) {
      ddb.resetHistory();
      const reads = answerReads([STAGE_COPY_0]);
      const covered = await repository.applyCutoffs(page);
      expect(covered[1]).toMatchObject({ revokedAt: CUTOFF_AT });
      expect(reads()[0]).toContain(copyId(['stage'], 0));
    }
  });

  it('is counted and listed as revoked: the reads of a scope’s records that name no session read copy 0', async () => {
    // A revoke-all's count and a status page read records by scope: their sessions' index entries do not
    // say which copy they read, and copy 0 holds what every version wrote.
    for (let call = 0; call < 16; call++) {
      ddb.resetHistory();
      const reads = answerReads([STAGE_COPY_0]);
      const records = await repository.readCutoffs([{ kind: 'stage' }]);
      expect(records).toHaveLength(1);
      expect(reads()).toEqual([[copyId(['stage'], 0)]]);
    }
  });
});

describe('a session stored by this version', () => {
  it('records at creation the copy its id picks', async () => {
    ddb.on(PutCommand).resolves({});
    const session = storedSession({ id: idReading(6) });
    await repository.create(session);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({ readsCutoffCopy: 6 });
    expect(toStoredSession(toItem(session)).readsCutoffCopy).toBe(6);
  });

  it('reads its own copy on an embed load: a record at copy 0 alone does not reach it until copied', async () => {
    const session = storedNow(idReading(4));
    const reads = answerReads([STAGE_COPY_0, { ...STAGE_COPY_0, id: copyId(['stage'], 4), cutoffCopy: 4 }]);
    const [covered] = await repository.applyCutoffs([session]);
    expect(covered).toMatchObject({ revokedAt: CUTOFF_AT });
    expect(reads()[0]).toContain(copyId(['stage'], 4));
    expect(reads()[0]).not.toContain(copyId(['stage'], 0));
  });

  it('spreads its loads over every copy as before: of 8,000 new sessions, each copy is read by about an eighth', async () => {
    const loads = new Array<number>(CUTOFF_COPIES).fill(0);
    ddb.on(BatchGetCommand).resolves({ Responses: { 'sessions-t': [] } });
    for (let i = 0; i < 8_000; i++) {
      const id = `9a1b2c3d-0000-4000-8000-${String(i).padStart(12, '0')}`;
      ddb.resetHistory();
      await repository.applyCutoffs([storedNow(id)]);
      const keys = (ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.['sessions-t']?.Keys ??
        []) as Array<{ id: string }>;
      const stage = keys.map(({ id: key }) => key).find((key) => key.startsWith(copyId(['stage'], 0)));
      const copy = stage === copyId(['stage'], 0) ? 0 : Number(stage?.split('#').pop());
      loads[copy] = (loads[copy] ?? 0) + 1;
    }
    // 1,000 a copy on average: none takes much more than an eighth, copy 0 included.
    for (const count of loads) expect(count).toBeGreaterThan(900);
    for (const count of loads) expect(count).toBeLessThan(1_100);
  });

  it('reads copy 0 when the copy it recorded is not one written any more (fewer copies since)', async () => {
    const reads = answerReads([STAGE_COPY_0]);
    const session = { ...storedNow(idReading(1)), readsCutoffCopy: CUTOFF_COPIES + 3 };
    const [covered] = await repository.applyCutoffs([session]);
    expect(covered).toMatchObject({ revokedAt: CUTOFF_AT });
    expect(reads()[0]).toContain(copyId(['stage'], 0));
  });
});
