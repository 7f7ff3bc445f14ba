import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '#admin/cli';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { CUTOFF_COPIES, cutoffCopyOf, cutoffIdOfKey } from '#lib/adapters/dynamodb/cutoff-record-items';
import { type CreatedSession, createSessionAs } from '#test/support/create-session-as';
import { useKeyOwnerCast } from '#test/support/key-owner-cast';
import { apiCall, call, type KeyOwnerFixture } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { scanItems } from '#test/support/stored-items';

/**
 * Cut-off records in copies, over HTTP on the local runtime (dynalite, or DynamoDB Local with
 * TEST_DYNAMODB=dynamodb-local): an embed load reads one copy of each record, picked by its session id,
 * so each test creates sessions until one of them reads each copy, and a cut-off that returned must
 * refuse every one of them.
 */
const runtime = useTestRuntime();
const { owner, otherTenant } = useKeyOwnerCast(runtime, 'copies-');

const REVOKED = { error: 'Unauthorized', message: 'This embed session has been revoked' };
const embed = (token: string) =>
  call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
const admin = (...args: string[]) =>
  runAdmin(args, { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, AWS_REGION: 'local' }) as Promise<
    Record<string, unknown>
  >;

/** What these tests read of a created session. */
type Created = { id: string; expiresAt: string };

/** As many sessions at once as there are copies, created by `who`: a copy is found in about three rounds. */
const createRound = (who: KeyOwnerFixture, fields: Record<string, unknown>) =>
  Promise.all(Array.from({ length: CUTOFF_COPIES }, () => createSessionAs<Created>(runtime, who, fields)));

/** Sessions of `userId` created by `who`, one for each copy its loads read (index: the copy); all of them created. */
async function oneReadingEachCopy(
  who: KeyOwnerFixture,
  fields: Record<string, unknown>,
): Promise<{ byCopy: CreatedSession<Created>[]; created: number }> {
  const byCopy = new Map<number, CreatedSession<Created>>();
  let created = 0;
  while (byCopy.size < CUTOFF_COPIES) {
    // 8 copies take about 22 sessions on average; 200 without one copy means the pick is broken.
    if (created >= 200) throw new Error(`${created} sessions read only copies ${[...byCopy.keys()]}`);
    const round = await createRound(who, fields);
    created += round.length;
    for (const session of round) {
      const copy = cutoffCopyOf(session.session.id);
      if (!byCopy.has(copy)) byCopy.set(copy, session);
    }
  }
  return { byCopy: [...byCopy.entries()].sort(([a], [b]) => a - b).map(([, session]) => session), created };
}

/** Every session the caller's listing answers for `query`, page after page. */
async function listedAll(
  who: KeyOwnerFixture,
  query: string,
): Promise<Array<{ id: string; status: string; revokedAt: string }>> {
  const sessions: Array<{ id: string; status: string; revokedAt: string }> = [];
  let cursor: string | null = null;
  // A cursor that never ended would otherwise loop until the test's timeout.
  for (let pages = 0; pages === 0 || cursor; pages++) {
    if (pages === 10) throw new Error(`the listing for ${query} still had a next page after ${pages}`);
    const after: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await apiCall(runtime, who.apiKey, 'GET', `/api/embed/sessions?${query}&limit=100${after}`);
    expect(page.status, page.text).toBe(200);
    sessions.push(...(page.body.data as typeof sessions));
    cursor = page.body.nextCursor as string | null;
  }
  return sessions;
}

/**
 * Sessions of `userId` created by `who` until one reads each copy, every one of them then made a session
 * stored before records had copies: its item loses the copy it recorded (`readsCutoffCopy`).
 */
async function storedBeforeCopies(
  who: KeyOwnerFixture,
  userId: string,
): Promise<{ byCopy: CreatedSession<Created>[]; all: CreatedSession<Created>[] }> {
  const all: CreatedSession<Created>[] = [];
  const byCopy = new Map<number, CreatedSession<Created>>();
  while (byCopy.size < CUTOFF_COPIES) {
    if (all.length >= 200)
      throw new Error(`${all.length} sessions hashed only to copies ${[...byCopy.keys()]}`);
    for (const session of await createRound(who, { userId })) {
      all.push(session);
      const copy = cutoffCopyOf(session.session.id);
      if (!byCopy.has(copy)) byCopy.set(copy, session);
    }
  }
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    for (const { session } of all) {
      await db.send(
        new UpdateCommand({
          TableName: runtime.tables.sessions,
          Key: { id: session.id },
          UpdateExpression: 'REMOVE readsCutoffCopy',
        }),
      );
    }
  } finally {
    db.destroy();
  }
  return { byCopy: [...byCopy.entries()].sort(([a], [b]) => a - b).map(([, session]) => session), all };
}

/** Writes the record of `key` as the version before copies did: copy 0 alone, one counted cut-off at `at`. */
async function putRecordBeforeCopies(key: string, at: string, until: number): Promise<void> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    await db.send(
      new PutCommand({
        TableName: runtime.tables.sessions,
        Item: {
          id: cutoffIdOfKey(key),
          cutoffScope: key,
          cutoffRevision: 2,
          cutoffCoversUntil: until,
          ttl: until,
          [`entry:${randomUUID()}`]: { at, byUserId: owner.userId, byKeyId: owner.keyId, until },
        },
      }),
    );
  } finally {
    db.destroy();
  }
}

/** The stored copies of the records whose scope key names `part`, by scope key. */
async function copiesNaming(part: string): Promise<Map<string, Record<string, unknown>[]>> {
  const items = await scanItems(
    runtime.dynamoEndpoint,
    runtime.tables.sessions,
    'attribute_exists(cutoffScope)',
  );
  const byScope = new Map<string, Record<string, unknown>[]>();
  for (const item of items) {
    const key = String(item.cutoffScope);
    if (!key.includes(part)) continue;
    byScope.set(key, [...(byScope.get(key) ?? []), item]);
  }
  return byScope;
}

const entryIds = (item: Record<string, unknown>) =>
  Object.keys(item)
    .filter((name) => name.startsWith('entry:'))
    .sort();

describe('a revoke-all written in every copy of its records', () => {
  it('is honoured by the loads reading each copy, and each of its records has every copy, each holding its cut-off', async () => {
    const userId = `copies-${randomUUID()}`;
    const { byCopy, created } = await oneReadingEachCopy(owner, { userId });
    for (const session of byCopy) expect((await embed(session.token)).status).toBe(200);
    const result = await apiCall(runtime, owner.apiKey, 'POST', '/api/embed/sessions/revoke', { userId });
    expect(result.body, result.text).toEqual({ revoked: created });
    for (const [copy, session] of byCopy.entries()) {
      const page = await embed(session.token);
      expect({ copy, body: page.body }).toEqual({ copy, body: REVOKED });
    }
    const records = await copiesNaming(userId);
    // The caller's own sessions of the user, and its organization's.
    expect(records.size).toBe(2);
    for (const [key, copies] of records) {
      expect(copies.map((item) => item.id).sort()).toEqual(
        Array.from({ length: CUTOFF_COPIES }, (_, copy) => cutoffIdOfKey(key, copy)).sort(),
      );
      const [first] = copies;
      expect(entryIds(first ?? {})).toHaveLength(1);
      for (const item of copies) expect(entryIds(item)).toEqual(entryIds(first ?? {}));
    }
  });

  it('honours a record written before copies existed at copy 0 only until `compact-cutoffs` copies it, then at every copy', async () => {
    const userId = `copies-old-${randomUUID()}`;
    const { byCopy } = await oneReadingEachCopy(owner, { userId });
    // The caller's own record of the user as a revoke-all wrote it before records had copies: one item.
    const key = JSON.stringify(['creatorUser', owner.userId, userId]);
    const at = new Date().toISOString();
    const until = Math.ceil(Date.now() / 1000) + 3_600;
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      await db.send(
        new PutCommand({
          TableName: runtime.tables.sessions,
          Item: {
            id: cutoffIdOfKey(key),
            cutoffScope: key,
            cutoffRevision: 2,
            cutoffCoversUntil: until,
            ttl: until,
            [`entry:${randomUUID()}`]: { at, byUserId: owner.userId, byKeyId: owner.keyId, until },
          },
        }),
      );
    } finally {
      db.destroy();
    }
    expect((await embed(byCopy[0]?.token ?? '')).body).toEqual(REVOKED);
    // The change feed takes the record for a revoke-all's write and starts its logouts, which raise its
    // expiry to that of the sessions it covers: settled first, so the copies are made from the record as
    // it ends up rather than racing that raise.
    const { events, logoutsSettled } = runtime;
    if (!events || !logoutsSettled) throw new Error('the test runtime has no change feed to settle');
    await events.poll();
    await logoutsSettled();
    const compacted = await admin('compact-cutoffs');
    expect(compacted.copies).toMatchObject({ unfinished: 0 });
    expect((compacted.copies as { copiesWritten: number }).copiesWritten).toBeGreaterThanOrEqual(
      CUTOFF_COPIES - 1,
    );
    for (const [copy, session] of byCopy.entries()) {
      const page = await embed(session.token);
      expect({ copy, body: page.body }).toEqual({ copy, body: REVOKED });
    }
    const [copies = []] = (await copiesNaming(userId)).values();
    expect(copies).toHaveLength(CUTOFF_COPIES);
    // Every copy expires with copy 0, and none before the sessions it covers.
    const primary = copies.find((item) => item.id === cutoffIdOfKey(key));
    const latest = Math.max(...byCopy.map(({ session }) => Math.ceil(Date.parse(session.expiresAt) / 1000)));
    expect(primary?.ttl).toBeGreaterThanOrEqual(Math.max(until, latest));
    for (const item of copies) expect(item.ttl).toBe(primary?.ttl);
    // Run again: every record has its copies.
    expect(((await admin('compact-cutoffs')).copies as { copiesWritten: number }).copiesWritten).toBe(0);
  });

  it('keeps a session created before the upgrade revoked by a record written then, whichever copy its id maps to: on the embed page, in a listing and in a revoke-all’s count', async () => {
    const userId = `copies-upgrade-${randomUUID()}`;
    const { byCopy, all } = await storedBeforeCopies(owner, userId);
    // The caller's own record of the user, as the version before copies wrote it after those sessions.
    const at = new Date().toISOString();
    await putRecordBeforeCopies(
      JSON.stringify(['creatorUser', owner.userId, userId]),
      at,
      Math.ceil(Date.now() / 1000) + 3_600,
    );
    // No `compact-cutoffs` run: every load of them refuses, copies 1 to 7 included.
    for (const [copy, session] of byCopy.entries()) {
      const page = await embed(session.token);
      expect({ copy, status: page.status, body: page.body }).toEqual({ copy, status: 401, body: REVOKED });
    }
    // However many sessions it took to reach every copy (a few dozen, now and then over a page's 50).
    const statuses = (await listedAll(owner, `userId=${userId}`)).map(({ id, status, revokedAt }) => ({
      id,
      status,
      revokedAt,
    }));
    expect(statuses.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      all
        .map(({ session }) => ({ id: session.id, status: 'revoked', revokedAt: at }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect(await listedAll(owner, `userId=${userId}&status=active`)).toEqual([]);
    // A session created since is the only one a revoke-all of the user finds active.
    const since = await createSessionAs<{ id: string }>(runtime, owner, { userId });
    const result = await apiCall(runtime, owner.apiKey, 'POST', '/api/embed/sessions/revoke', { userId });
    expect(result.body, result.text).toEqual({ revoked: 1 });
    expect((await embed(since.token)).body).toEqual(REVOKED);
  });

  // Last in the file: the stage's cut-off covers every session created before it.
  it('an operator’s stage-wide cut-off is honoured by every tenant’s loads, whichever copy they read', async () => {
    const ours = await oneReadingEachCopy(owner, { userId: `copies-stage-${randomUUID()}` });
    const theirs = await oneReadingEachCopy(otherTenant, { userId: `copies-stage-${randomUUID()}` });
    await admin('revoke-all-sessions', '--before', new Date().toISOString());
    for (const [copy, session] of [...ours.byCopy, ...theirs.byCopy].entries()) {
      const page = await embed(session.token);
      expect({ copy: copy % CUTOFF_COPIES, body: page.body }).toEqual({
        copy: copy % CUTOFF_COPIES,
        body: REVOKED,
      });
    }
    const stage = await copiesNaming('["stage"]');
    expect(stage.get('["stage"]')).toHaveLength(CUTOFF_COPIES);
  });
});
