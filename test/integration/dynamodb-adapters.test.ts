import { createHash, randomUUID } from 'node:crypto';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoCoveredSessions } from '#lib/adapters/dynamodb/covered-sessions';
import { CUTOFF_COPIES, cutoffCopyOf, cutoffId } from '#lib/adapters/dynamodb/cutoff-record-items';
import type { CutoffTable } from '#lib/adapters/dynamodb/cutoff-record-updates';
import {
  copyCutoffRecord,
  DynamoCutoffRecords,
  extendCutoffRecordExpiry,
} from '#lib/adapters/dynamodb/cutoff-records';
import {
  DynamoDestinationRateLimit,
  HOST_RATE_KEY_PREFIX,
  HOST_RATE_TTL_SECONDS,
} from '#lib/adapters/dynamodb/host-rates';
import { DynamoIdempotencyRepository } from '#lib/adapters/dynamodb/idempotency';
import { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import { SCOPE_WRITE_SHARDS, sessionShard } from '#lib/adapters/dynamodb/session-items';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { DynamoWebhookRepository } from '#lib/adapters/dynamodb/webhooks';
import { LOCAL_TABLE_NAMES, SESSION_SCOPE_INDEXES } from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import { CUTOFF_ENTRIES_MAX, type CutoffScope, coveringCutoff, cutoffScopeKey } from '#lib/domain/cutoffs';
import type { CoveredRange, CoveredScope } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { isWebhookId, newWebhookId } from '#lib/domain/webhook';
import { METADATA_MAX_BYTES_CEILING } from '#lib/platform/config';
import { ensureTables } from '#local/dynamodb';
import { apiKeyRecord } from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';
import { startTestDynamo } from '#test/support/test-dynamo';

/**
 * The adapters against a real DynamoDB implementation (the embedded dynalite, or AWS's DynamoDB Local in
 * `npm run test:dynamodb-local`, with the tables and indexes built from lib/definitions/tables.ts): what the
 * unit tests only check as request parameters.
 */
let dynamo: { endpoint: string; close(): Promise<void> };
let db: ReturnType<typeof createDocumentClient>;
let sessions: DynamoSessionRepository;
let cutoffs: DynamoCutoffRecords;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
  db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
  sessions = new DynamoSessionRepository(db, LOCAL_TABLE_NAMES.sessions);
  cutoffs = new DynamoCutoffRecords(db, LOCAL_TABLE_NAMES.sessions);
});
afterAll(async () => {
  db?.destroy();
  await dynamo?.close();
});

let counter = 0;
/** A session with a fresh UUID-shaped id and token hash. */
function session(overrides: Partial<StoredSession> = {}): StoredSession {
  counter += 1;
  return storedSession({
    id: `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`,
    tokenHash: hashCredential(`token-${counter}`),
    ...overrides,
  });
}

describe('DynamoSessionRepository on the embedded DynamoDB', () => {
  it('finds a stored session through the token index, and reads it back exactly as stored', async () => {
    const stored = session({
      // As JSON.parse reads a request body: "__proto__" an own key, not the object's prototype.
      metadata: JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}, "n": 1.5}'),
    });
    await sessions.create(stored);
    expect(await sessions.lookupToken(stored.tokenHash)).toEqual({
      id: stored.id,
      boardId: stored.boardId,
      orgId: stored.orgId,
      userId: stored.userId,
      createdByUserId: stored.createdByUserId,
      createdByKeyId: stored.createdByKeyId,
      readsCutoffCopy: cutoffCopyOf(stored.id),
    });
    const found = await sessions.get(stored.id);
    // With the copy of the cut-off records its loads read, recorded as it was stored.
    expect(found).toEqual({ ...stored, readsCutoffCopy: cutoffCopyOf(stored.id) });
    expect(Object.keys(found?.metadata ?? {}).sort()).toEqual(['__proto__', 'constructor', 'n']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never overwrites an existing session: a second put with the same id is refused and the first stays', async () => {
    const first = session();
    await sessions.create(first);
    const second = { ...session(), id: first.id, userId: 'someone-else' };
    await expect(sessions.create(second)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(await sessions.get(first.id)).toEqual({ ...first, readsCutoffCopy: cutoffCopyOf(first.id) });
    expect(await sessions.lookupToken(second.tokenHash)).toBeUndefined();
  });

  it('stores the TTL attribute in epoch seconds from expiresAt, and no token', async () => {
    const stored = session({ expiresAt: '2026-02-01T00:00:00.500Z' });
    await sessions.create(stored);
    const { Item } = await db.send(
      new GetCommand({ TableName: LOCAL_TABLE_NAMES.sessions, Key: { id: stored.id } }),
    );
    expect(Item?.ttl).toBe(Date.parse('2026-02-01T00:00:01.000Z') / 1000);
    expect(JSON.stringify(Item)).not.toContain(`token-${counter}`);
  });

  it('stores the largest session the API can accept: the metadata ceiling and every field at its longest', async () => {
    // Four-byte characters make the 256-character fields as large as they can be in bytes.
    const longest = '😀'.repeat(256);
    const metadata = { pad: 'x'.repeat(METADATA_MAX_BYTES_CEILING - '{"pad":""}'.length) };
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(METADATA_MAX_BYTES_CEILING);
    const largest = session({
      boardId: longest,
      orgId: longest,
      userId: longest,
      createdByUserId: longest,
      email: `${'a'.repeat(64)}@${'b'.repeat(185)}.com`,
      firstName: longest,
      lastName: longest,
      plan: longest,
      avatarUrl: `https://example.com/${'a'.repeat(2048 - 20)}`,
      metadata,
    });
    await sessions.create(largest);
    expect(await sessions.get(largest.id)).toEqual({
      ...largest,
      readsCutoffCopy: cutoffCopyOf(largest.id),
    });
    expect(await sessions.lookupToken(largest.tokenHash)).toMatchObject({ id: largest.id, boardId: longest });
  });

  it('returns undefined for a token hash no session has', async () => {
    expect(await sessions.lookupToken(hashCredential('unknown'))).toBeUndefined();
  });

  it('pages a scope newest first, each page continuing exactly below the last', async () => {
    const boardId = 'board-paged';
    const created = [];
    for (let i = 0; i < 7; i++) {
      // Two sessions share a creation instant: the id breaks the tie, so the order stays total.
      const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, Math.floor(i / 2) * 2)).toISOString();
      created.push(session({ boardId, createdAt }));
    }
    for (const s of created) await sessions.create(s);
    const seen: string[] = [];
    let below: string | undefined;
    do {
      const page = await sessions.queryScope(
        { kind: 'board', boardId },
        { ...(below ? { below } : {}), limit: 3 },
      );
      seen.push(...page.refs.map((ref) => ref.id));
      below = page.next;
    } while (below);
    const expected = [...created]
      .sort((a, b) => `${b.createdAt}#${b.id}`.localeCompare(`${a.createdAt}#${a.id}`))
      .map((s) => s.id);
    expect(seen).toEqual(expected);
  });

  it('finds a session in each scope it belongs to and in no other', async () => {
    const mine = session({
      boardId: 'board-s',
      orgId: 'org-s',
      userId: 'user-s',
      createdByUserId: 'owner-s',
    });
    await sessions.create(mine);
    const ids = async (scope: Parameters<DynamoSessionRepository['queryScope']>[0]) =>
      (await sessions.queryScope(scope, { limit: 100 })).refs.map((ref) => ref.id);
    expect(await ids({ kind: 'orgUser', orgId: 'org-s', userId: 'user-s' })).toEqual([mine.id]);
    expect(await ids({ kind: 'orgUser', orgId: 'org-s', userId: 'user-s', boardId: 'board-s' })).toEqual([
      mine.id,
    ]);
    expect(await ids({ kind: 'orgUser', orgId: 'org-s', userId: 'user-s', boardId: 'other' })).toEqual([]);
    expect(await ids({ kind: 'creatorUser', creatorUserId: 'owner-s', userId: 'user-s' })).toEqual([mine.id]);
    expect(await ids({ kind: 'creatorBoard', creatorUserId: 'owner-s', boardId: 'board-s' })).toEqual([
      mine.id,
    ]);
    expect(await ids({ kind: 'creatorUser', creatorUserId: 'someone-else', userId: 'user-s' })).toEqual([]);
    expect(await ids({ kind: 'orgUser', orgId: 'other-org', userId: 'user-s' })).toEqual([]);
  });

  it('puts a session in the board index partition of the shard sessionShard gives it, and no other', async () => {
    const stored = session({ boardId: 'board-sharded' });
    await sessions.create(stored);
    const holders: number[] = [];
    for (let shard = 0; shard < SCOPE_WRITE_SHARDS; shard++) {
      const { Items } = await db.send(
        new QueryCommand({
          TableName: LOCAL_TABLE_NAMES.sessions,
          IndexName: SESSION_SCOPE_INDEXES.board,
          KeyConditionExpression: 'boardShardKey = :pk',
          ExpressionAttributeValues: { ':pk': `board-sharded#${shard}` },
        }),
      );
      if (Items?.some((item) => item.id === stored.id)) holders.push(shard);
    }
    expect(holders).toEqual([sessionShard(stored.id)]);
  });

  it('pages a user’s scope narrowed to a board across shards, nothing skipped or repeated', async () => {
    const created: StoredSession[] = [];
    for (let i = 0; i < 30; i++) {
      const createdAt = new Date(Date.UTC(2026, 0, 2, 0, 0, Math.floor(i / 3))).toISOString();
      created.push(
        session({
          orgId: 'org-f',
          userId: 'user-f',
          boardId: i % 4 === 0 ? 'board-f' : 'board-g',
          createdAt,
        }),
      );
    }
    for (const s of created) await sessions.create(s);
    const scope = { kind: 'orgUser', orgId: 'org-f', userId: 'user-f', boardId: 'board-f' } as const;
    const seen: string[] = [];
    let below: string | undefined;
    do {
      const page = await sessions.queryScope(scope, { ...(below ? { below } : {}), limit: 2 });
      seen.push(...page.refs.map((ref) => ref.id));
      below = page.next;
    } while (below);
    const expected = created
      .filter((s) => s.boardId === 'board-f')
      .sort((a, b) => `${b.createdAt}#${b.id}`.localeCompare(`${a.createdAt}#${a.id}`))
      .map((s) => s.id);
    expect(seen).toEqual(expected);
  });

  it('finds the count’s candidates in every shard: active at the cut-off, each with its cut-off subject', async () => {
    const at = '2026-01-03T00:00:00.000Z';
    const scoped = { orgId: 'org-c', userId: 'user-c', createdByUserId: 'owner-c' };
    const before = Array.from({ length: 20 }, (_, i) =>
      session({
        ...scoped,
        boardId: 'board-c',
        createdAt: new Date(Date.UTC(2026, 0, 2, 0, i)).toISOString(),
      }),
    );
    const atCutoff = session({ ...scoped, createdAt: at });
    const after = session({ ...scoped, createdAt: '2026-01-03T00:00:00.001Z' });
    const expired = session({ ...scoped, createdAt: '2026-01-01T00:00:00.000Z', expiresAt: at });
    const elsewhere = session({ ...scoped, orgId: 'org-d', createdAt: '2026-01-01T00:00:00.000Z' });
    for (const s of [...before, atCutoff, after, expired, elsewhere]) await sessions.create(s);
    const revoked = before[0] as StoredSession;
    await sessions.revoke(revoked.id, {
      revokedAt: '2026-01-02T12:00:00.000Z',
      byUserId: 'o',
      byKeyId: null,
    });
    const active = [...before.slice(1), atCutoff];

    const byOrg = await sessions.scopeCandidates({ kind: 'orgUser', orgId: 'org-c', userId: 'user-c' }, at);
    expect(byOrg.map((c) => c.id).sort()).toEqual(active.map((s) => s.id).sort());
    expect(byOrg.find((c) => c.id === before[1]?.id)).toEqual({
      id: before[1]?.id,
      createdAt: before[1]?.createdAt,
      orgId: 'org-c',
      userId: 'user-c',
      boardId: 'board-c',
      createdByUserId: 'owner-c',
      expiresAt: before[1]?.expiresAt,
    });
    const own = { kind: 'creatorUser', creatorUserId: 'owner-c', userId: 'user-c' } as const;
    expect((await sessions.scopeCandidates(own, at)).map((c) => c.id).sort()).toEqual(
      [...active, elsewhere].map((s) => s.id).sort(),
    );
    // Leaving out the sessions counted through org-c's own scope.
    expect((await sessions.scopeCandidates(own, at, { exceptOrgs: ['org-c'] })).map((c) => c.id)).toEqual([
      elsewhere.id,
    ]);
  });

  it('reads many sessions at once and leaves out ids that name none', async () => {
    const a = session();
    const b = session();
    await sessions.create(a);
    await sessions.create(b);
    const found = await sessions.getMany([a.id, 'missing', b.id]);
    expect(found.map((s) => s.id).sort()).toEqual([a.id, b.id].sort());
  });

  it('keeps the first revocation, and never creates an item for an unknown id', async () => {
    const stored = session();
    await sessions.create(stored);
    const first = { revokedAt: '2026-01-02T00:00:00.000Z', byUserId: 'owner-1', byKeyId: 'key_1' };
    const later = { revokedAt: '2026-01-03T00:00:00.000Z', byUserId: 'owner-2', byKeyId: null };
    expect(await sessions.revoke(stored.id, first)).toMatchObject({
      revokedAt: first.revokedAt,
      revokedByUserId: 'owner-1',
      revokedByKeyId: 'key_1',
    });
    expect(await sessions.revoke(stored.id, later)).toMatchObject({ revokedAt: first.revokedAt });
    const unknown = '00000000-0000-4000-8000-999999999999';
    expect(await sessions.revoke(unknown, first)).toBeUndefined();
    expect(await sessions.get(unknown)).toBeUndefined();
  });
});

describe('cut-off records on the embedded DynamoDB', () => {
  const minute = (n: number) => new Date(Date.UTC(2026, 0, 2, 0, 0, 0, 0) + n * 60_000).toISOString();
  const by = { byUserId: 'owner-k', byKeyId: 'key_k' };
  /** The record of `scope` as the table holds it. */
  const itemOf = async (scope: CutoffScope, copy = 0) =>
    (
      await db.send(
        new GetCommand({
          TableName: LOCAL_TABLE_NAMES.sessions,
          Key: { id: cutoffId(scope, copy) },
          ConsistentRead: true,
        }),
      )
    ).Item ?? {};
  const entryNames = (item: Record<string, unknown>) =>
    Object.keys(item).filter((name) => name.startsWith('entry:'));

  it('keeps a record within CUTOFF_ENTRIES_MAX entries and a few KB over three times that many calls, and gives it an expiry', async () => {
    const scope: CutoffScope = {
      kind: 'creatorBoardUser',
      creatorUserId: 'owner-k',
      boardId: 'b-k',
      userId: 'u-k',
    };
    // Three times the bound, on the real adapter; the use case's unit test makes 10,000 calls.
    const calls = 3 * CUTOFF_ENTRIES_MAX;
    for (let n = 0; n < calls; n++) {
      const id = `call-${n}`;
      // A call's two writes: uncounted before its count, then moved to its end, counted.
      await cutoffs.writeCutoff([scope], { entry: { id, at: minute(2 * n), ...by }, now: minute(2 * n) });
      await cutoffs.writeCutoff([scope], {
        entry: { id, at: minute(2 * n + 1), ...by, until: 1_900_000_000 + n },
        countedThrough: minute(2 * n),
        now: minute(2 * n + 1),
      });
    }
    const item = await itemOf(scope);
    expect(entryNames(item).length).toBe(CUTOFF_ENTRIES_MAX);
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(4 * 1024);
    expect(item.ttl).toBe(1_900_000_000 + calls - 1);
    const [record] = await sessions.readCutoffs([scope]);
    // Every session up to the last call is covered still, the oldest by a later cut-off.
    const subject = {
      orgId: 'o',
      userId: 'u-k',
      boardId: 'b-k',
      createdByUserId: 'owner-k',
      tenant: { kind: 'keyOwner' as const, id: 'owner-k' },
    };
    for (const at of [minute(0), minute(calls), minute(2 * calls - 1)]) {
      expect(coveringCutoff({ ...subject, createdAt: at }, record ? [record] : [])).toBeDefined();
    }
  }, 120_000);

  it('loses no writer’s cut-off when several write one record at once', async () => {
    const scope: CutoffScope = { kind: 'board', boardId: 'b-race' };
    await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        cutoffs.writeCutoff([scope], {
          entry: { id: `w-${n}`, at: minute(n), ...by, byUserId: `w-${n}` },
          now: minute(n),
        }),
      ),
    );
    const item = await itemOf(scope);
    expect(entryNames(item).sort()).toEqual(Array.from({ length: 6 }, (_, n) => `entry:w-${n}`));
    expect(item.cutoffRevision).toBe(6);
  });

  it('reads a record written before records were bounded as it was, and shrinks it (and every copy made of it) on its next write', async () => {
    const scope: CutoffScope = { kind: 'board', boardId: 'b-legacy' };
    const legacy: Record<string, unknown> = { id: cutoffId(scope), cutoffScope: cutoffScopeKey(scope) };
    for (let n = 0; n < 250; n++) legacy[`entry:old-${n}`] = { at: minute(n), byUserId: 'm', byKeyId: 'k' };
    await db.send(new PutCommand({ TableName: LOCAL_TABLE_NAMES.sessions, Item: legacy }));
    // Copy 0, where a record written before copies existed is (read by the loads that pick it).
    const [read] = await new DynamoCoveredSessions(db, LOCAL_TABLE_NAMES.sessions).readCutoffs([scope]);
    expect(read?.entries).toHaveLength(250);
    await cutoffs.writeCutoff([scope], {
      entry: { id: 'new', at: minute(300), ...by, until: 1_900_000_000 },
      countedThrough: minute(299),
      now: minute(300),
    });
    const item = await itemOf(scope);
    expect(entryNames(item).length).toBe(CUTOFF_ENTRIES_MAX);
    // Its old cut-offs were counted by the new one's count: the record now expires.
    expect(item.ttl).toBe(1_900_000_000);
    // The other copies started from it, bounded by the same merge.
    for (let copy = 1; copy < CUTOFF_COPIES; copy++) {
      const other = await itemOf(scope, copy);
      expect(entryNames(other).sort()).toEqual(entryNames(item).sort());
      expect(other.ttl).toBe(1_900_000_000);
    }
    const [after] = await sessions.readCutoffs([scope]);
    const subject = {
      orgId: 'o',
      userId: 'u',
      boardId: 'b-legacy',
      createdByUserId: 'c',
      tenant: { kind: 'keyOwner' as const, id: 'c' },
    };
    expect(coveringCutoff({ ...subject, createdAt: minute(0) }, after ? [after] : [])).toBeDefined();
  });

  describe('a raise of a record’s expiry while `compact-cutoffs` makes its copies', () => {
    /** The sessions table as the record writes use it (built in the tests: the client is made in beforeAll). */
    const sessionsTable = (): CutoffTable => ({
      db,
      tableName: LOCAL_TABLE_NAMES.sessions,
      batchGetItems: async (ids) => {
        const { Responses } = await db.send(
          new BatchGetCommand({
            RequestItems: {
              [LOCAL_TABLE_NAMES.sessions]: { Keys: ids.map((id) => ({ id })), ConsistentRead: true },
            },
          }),
        );
        return Responses?.[LOCAL_TABLE_NAMES.sessions] ?? [];
      },
    });
    /** The record of `scope` as the version before copies wrote it: copy 0 alone, covering until `until`. */
    const recordBeforeCopies = (scope: CutoffScope, until: number) =>
      db.send(
        new PutCommand({
          TableName: LOCAL_TABLE_NAMES.sessions,
          Item: {
            id: cutoffId(scope),
            cutoffScope: cutoffScopeKey(scope),
            cutoffRevision: 2,
            cutoffCoversUntil: until,
            ttl: until,
            'entry:before-copies': { at: minute(1), ...by, until },
          },
        }),
      );
    const coversUntilOfEveryCopy = async (scope: CutoffScope) =>
      Promise.all(
        Array.from(
          { length: CUTOFF_COPIES },
          async (_, copy) => (await itemOf(scope, copy)).cutoffCoversUntil,
        ),
      );

    it('leaves no copy below the raise when the copies are made after the raise read them', async () => {
      const scope: CutoffScope = { kind: 'creatorUser', creatorUserId: 'c-race', userId: 'u-raise-last' };
      await recordBeforeCopies(scope, 1_800_000_000);
      const table = sessionsTable();
      let copied = false;
      const racing: CutoffTable = {
        ...table,
        batchGetItems: async (ids) => {
          const items = await table.batchGetItems(ids);
          // The raise has read every copy (only copy 0 exists): the copy pass runs to its end now.
          if (!copied && ids.length === CUTOFF_COPIES) {
            copied = true;
            expect(await copyCutoffRecord(table, scope, minute(5))).toBe(CUTOFF_COPIES - 1);
          }
          return items;
        },
      };
      expect(await extendCutoffRecordExpiry(racing, scope, 1_900_000_000)).toBe(true);
      expect(await coversUntilOfEveryCopy(scope)).toEqual(Array(CUTOFF_COPIES).fill(1_900_000_000));
    });

    it('leaves no copy below the raise when the raise writes copy 0 while the copies are made from it', async () => {
      const scope: CutoffScope = { kind: 'creatorUser', creatorUserId: 'c-race', userId: 'u-copy-last' };
      await recordBeforeCopies(scope, 1_800_000_000);
      const table = sessionsTable();
      let raised = false;
      const racing: CutoffTable = {
        ...table,
        batchGetItems: async (ids) => {
          const items = await table.batchGetItems(ids);
          // A copy has read copy 0 to start from it: the raise runs to its end before that copy is made.
          if (!raised && ids.length === 2) {
            raised = true;
            expect(await extendCutoffRecordExpiry(table, scope, 1_900_000_000)).toBe(true);
          }
          return items;
        },
      };
      expect(await copyCutoffRecord(racing, scope, minute(5))).toBe(CUTOFF_COPIES - 1);
      expect(await coversUntilOfEveryCopy(scope)).toEqual(Array(CUTOFF_COPIES).fill(1_900_000_000));
    });
  });

  it('undoes an uncounted write, and raises a record’s expiry without ever creating one', async () => {
    const scope: CutoffScope = { kind: 'user', userId: 'u-undo' };
    await cutoffs.writeCutoff([scope], {
      entry: { id: 'kept', at: minute(1), ...by, until: 1_800_000_000 },
      now: minute(1),
    });
    await cutoffs.writeCutoff([scope], { entry: { id: 'undone', at: minute(2), ...by }, now: minute(2) });
    expect((await itemOf(scope)).ttl).toBeUndefined();
    await cutoffs.removeCutoffEntry([scope], 'undone', minute(3));
    const item = await itemOf(scope);
    expect(entryNames(item)).toEqual(['entry:kept']);
    expect(item.ttl).toBe(1_800_000_000);

    const covered = new DynamoCoveredSessions(db, LOCAL_TABLE_NAMES.sessions);
    await covered.extendCutoffExpiry(scope, 1_850_000_000);
    expect(await itemOf(scope)).toMatchObject({ cutoffCoversUntil: 1_850_000_000, ttl: 1_850_000_000 });
    const gone: CutoffScope = { kind: 'user', userId: 'u-never' };
    await covered.extendCutoffExpiry(gone, 1_850_000_000);
    expect(await itemOf(gone)).toEqual({});
  });
});

describe('DynamoCoveredSessions on the embedded DynamoDB', () => {
  /** Every session of every part of `scope`, following each part's cursor a page of `limit` at a time. */
  async function readAll(
    covered: DynamoCoveredSessions,
    scope: CoveredScope,
    range: CoveredRange,
    limit: number,
  ): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let pages = 0;
    for (let part = 0; part < covered.coveredParts; part++) {
      let after: string | undefined;
      do {
        const page = await covered.coveredPage(scope, part, range, {
          ...(after !== undefined ? { after } : {}),
          limit,
        });
        pages += 1;
        ids.push(...page.sessions.map((found) => found.id));
        after = page.next;
      } while (after !== undefined);
    }
    return { ids: ids.sort(), pages };
  }

  it('reads the sessions a cut-off covers, part by part and page by page: in its range, neither revoked nor expired before it, each once', async () => {
    const covered = new DynamoCoveredSessions(db, LOCAL_TABLE_NAMES.sessions);
    const board = `board-covered-${counter}`;
    const at = (minute: number) => `2026-02-01T00:${String(minute).padStart(2, '0')}:00.000Z`;
    const inRange = Array.from({ length: 24 }, (_, n) =>
      session({ boardId: board, userId: `u${n % 3}`, createdAt: at(10 + (n % 10)), expiresAt: at(59) }),
    );
    const outside = [
      session({ boardId: board, createdAt: at(5), expiresAt: at(59) }), // at or before `since`
      session({ boardId: board, createdAt: at(31), expiresAt: at(59) }), // after the cut-off
      session({ boardId: board, createdAt: at(12), expiresAt: at(25) }), // expired before it
      session({ boardId: 'board-elsewhere', createdAt: at(12), expiresAt: at(59) }),
    ];
    const revoked = session({ boardId: board, createdAt: at(12), expiresAt: at(59) });
    for (const stored of [...inRange, ...outside, revoked]) await sessions.create(stored);
    await sessions.revoke(revoked.id, { revokedAt: at(20), byUserId: 'owner-1', byKeyId: null });
    const range = { since: at(5), upTo: at(30) };

    const byIndex = await readAll(covered, { kind: 'board', boardId: board }, range, 2);
    expect(byIndex.ids).toEqual(inRange.map((found) => found.id).sort());
    expect(byIndex.pages).toBeGreaterThan(covered.coveredParts);

    const oneUser = await readAll(
      covered,
      { kind: 'orgUser', orgId: 'org-a', userId: 'u1', boardId: board },
      range,
      3,
    );
    expect(oneUser.ids).toEqual(
      inRange
        .filter((found) => found.userId === 'u1')
        .map((found) => found.id)
        .sort(),
    );

    const scanned = await readAll(covered, { kind: 'allOfUser', userId: 'u2' }, range, 5);
    expect(scanned.ids).toEqual(
      inRange
        .filter((found) => found.userId === 'u2')
        .map((found) => found.id)
        .sort(),
    );
    // An API key's and a member's sessions in an organization: no index holds them, the table is scanned.
    const keyId = `key_covered_${counter}`;
    const member = `member-covered-${counter}`;
    const memberOf = [
      session({
        boardId: board,
        orgId: 'org-m',
        createdByUserId: member,
        createdAt: at(12),
        expiresAt: at(59),
      }),
      session({
        boardId: board,
        orgId: 'org-other',
        createdByUserId: member,
        createdAt: at(12),
        expiresAt: at(59),
      }),
    ];
    for (const stored of memberOf) await sessions.create(stored);
    const keyed = [
      session({ boardId: board, createdByKeyId: keyId, createdAt: at(11), expiresAt: at(59) }),
      session({ boardId: board, createdByKeyId: keyId, createdAt: at(31), expiresAt: at(59) }), // after the cut-off
    ];
    for (const stored of keyed) await sessions.create(stored);
    const ofKey = await readAll(covered, { kind: 'key', keyId }, range, 3);
    expect(ofKey.ids).toEqual([keyed[0]?.id]);
    const ofMember = await readAll(
      covered,
      { kind: 'orgCreator', orgId: 'org-m', creatorUserId: member },
      range,
      3,
    );
    expect(ofMember.ids).toEqual([memberOf[0]?.id]);

    const stage = await readAll(covered, { kind: 'stage' }, range, 7);
    expect(stage.ids).toEqual(expect.arrayContaining(inRange.map((found) => found.id)));
    for (const left of [...outside.slice(0, 3), revoked]) expect(stage.ids).not.toContain(left.id);
  });
});

describe('DynamoMembershipRepository and DynamoBoardRepository on the embedded DynamoDB', () => {
  it('lists the organizations of a user through the user index, and forgets a removed one', async () => {
    const memberships = new DynamoMembershipRepository(db, LOCAL_TABLE_NAMES.memberships);
    await memberships.add('org-2', 'member-x', '2026-01-01T00:00:00.000Z');
    await memberships.add('org-1', 'member-x', '2026-01-01T00:00:00.000Z');
    await memberships.add('org-1', 'member-y', '2026-01-01T00:00:00.000Z');
    expect(await memberships.orgsOf('member-x')).toEqual(['org-1', 'org-2']);
    await memberships.remove('org-2', 'member-x');
    expect(await memberships.orgsOf('member-x')).toEqual(['org-1']);
    expect(await memberships.isMember('org-2', 'member-x')).toBe(false);
  });

  it('tells since when a user is a member: the time it was added, null without one, undefined when not', async () => {
    const memberships = new DynamoMembershipRepository(db, LOCAL_TABLE_NAMES.memberships);
    await memberships.add('org-since', 'dated', '2026-01-02T03:04:05.000Z');
    await db.send(
      new PutCommand({
        TableName: LOCAL_TABLE_NAMES.memberships,
        Item: { orgId: 'org-since', userId: 'undated' },
      }),
    );
    expect(await memberships.memberSince('org-since', 'dated')).toBe('2026-01-02T03:04:05.000Z');
    expect(await memberships.memberSince('org-since', 'undated')).toBeNull();
    expect(await memberships.memberSince('org-since', 'stranger')).toBeUndefined();
  });

  it('replaces a board in its own organization, and refuses to move it to another', async () => {
    const boards = new DynamoBoardRepository(db, LOCAL_TABLE_NAMES.boards);
    expect(await boards.put({ boardId: 'b-move', orgId: 'org-1', visibility: 'PRIVATE', name: null })).toBe(
      true,
    );
    expect(await boards.put({ boardId: 'b-move', orgId: 'org-1', visibility: 'PUBLIC', name: 'N' })).toBe(
      true,
    );
    expect(await boards.put({ boardId: 'b-move', orgId: 'org-2', visibility: 'PUBLIC', name: 'N' })).toBe(
      false,
    );
    expect(await boards.get('b-move')).toEqual({
      boardId: 'b-move',
      orgId: 'org-1',
      visibility: 'PUBLIC',
      name: 'N',
    });
  });
});

describe('DynamoIdempotencyRepository on the embedded DynamoDB', () => {
  const now = new Date('2026-03-01T00:00:00.000Z');
  const at = (ms: number) => new Date(now.getTime() + ms);
  const attempt = (attemptId: string, leaseUntilMs: number, reservation?: string) => ({
    fingerprint: 'f'.repeat(64),
    attemptId,
    leaseUntilMs,
    ...(reservation !== undefined ? { reservation } : {}),
  });
  const records = () => new DynamoIdempotencyRepository(db, LOCAL_TABLE_NAMES.idempotency);

  it('claims a key once; a take-over after the lease keeps the first reservation; completion names the attempt', async () => {
    const repo = records();
    const id = 'record-converge';
    expect(await repo.create(id, attempt('a1', now.getTime() + 5_000, 'sealed-1'), now)).toBe(true);
    // The same write again (an SDK retry whose first answer was lost): refused, the record is a1's.
    expect(await repo.create(id, attempt('a1', now.getTime() + 5_000, 'sealed-1'), now)).toBe(false);
    expect(await repo.get(id, now)).toMatchObject({ attemptId: 'a1', reservation: 'sealed-1' });
    // Within the lease nobody takes it over; after it, the next attempt does, with a1's reservation.
    expect(
      await repo.takeOver(id, attempt('a2', now.getTime() + 9_000, 'sealed-2'), at(1_000)),
    ).toBeUndefined();
    expect(await repo.takeOver(id, attempt('a2', now.getTime() + 11_000, 'sealed-2'), at(6_000))).toEqual({
      reservation: 'sealed-1',
    });
    // a1 may no longer complete; a2 may, twice (a retried completion writes the same again).
    expect(await repo.complete(id, 'a1', { status: 201, sealed: 'answer-1' })).toBe(false);
    expect(await repo.complete(id, 'a2', { status: 201, sealed: 'answer-2' })).toBe(true);
    expect(await repo.complete(id, 'a2', { status: 201, sealed: 'answer-2' })).toBe(true);
    expect(await repo.get(id, at(7_000))).toEqual({
      state: 'COMPLETE',
      fingerprint: 'f'.repeat(64),
      attemptId: 'a2',
      status: 201,
      sealed: 'answer-2',
    });
  });

  it('ends only its own lease on release, keeping the reservation for the retry', async () => {
    const repo = records();
    const id = 'record-release';
    await repo.create(id, attempt('b1', now.getTime() + 5_000, 'sealed-b'), now);
    await repo.release(id, 'someone-else');
    expect(await repo.get(id, now)).toMatchObject({ lockedUntilMs: now.getTime() + 5_000 });
    await repo.release(id, 'b1');
    expect(await repo.get(id, now)).toMatchObject({ lockedUntilMs: 0, reservation: 'sealed-b' });
    expect(await repo.takeOver(id, attempt('b2', now.getTime() + 5_000, 'other'), at(1))).toEqual({
      reservation: 'sealed-b',
    });
  });
});

describe('DynamoApiKeyRepository on the embedded DynamoDB', () => {
  it('records a key’s registration in the usage plans once: the first time stays, a missing key gets none', async () => {
    const apiKeys = new DynamoApiKeyRepository(db, LOCAL_TABLE_NAMES.apiKeys);
    const keyHash = hashCredential(`registration-${Date.now()}`);
    await apiKeys.create(apiKeyRecord(keyHash, { keyId: `key_${keyHash.slice(0, 24)}` }));
    expect((await apiKeys.getByHash(keyHash))?.usagePlanAt).toBeUndefined();

    await apiKeys.recordUsagePlan(keyHash, '2026-03-01T12:00:00.000Z');
    await apiKeys.recordUsagePlan(keyHash, '2026-03-01T13:00:00.000Z');
    expect((await apiKeys.getByHash(keyHash))?.usagePlanAt).toBe('2026-03-01T12:00:00.000Z');

    const missing = hashCredential(`missing-${Date.now()}`);
    await apiKeys.recordUsagePlan(missing, '2026-03-01T12:00:00.000Z');
    expect(await apiKeys.getByHash(missing)).toBeUndefined();
  });
});

describe('DynamoWebhookRepository secret rotation on the embedded DynamoDB', () => {
  const owner = 'owner-rotation';
  let webhooks: DynamoWebhookRepository;
  let n = 0;
  async function stored() {
    webhooks = new DynamoWebhookRepository(db, LOCAL_TABLE_NAMES.webhooks);
    n += 1;
    const endpoint = {
      id: `whe_${String(n).padStart(32, 'a')}`,
      ownerUserId: owner,
      url: 'https://hooks.example.com/in',
      events: ['session.created' as const],
      description: null,
      createdAt: '2026-03-01T12:00:00.000Z',
      createdByKeyId: 'key_a',
    };
    await webhooks.create(endpoint, { maxPerOwner: 16 });
    return endpoint.id;
  }
  const rotation = (from: number, rotationId: string) => ({
    from,
    previousUntil: '2026-03-02T12:00:00.000Z',
    rotationId,
  });

  it('moves an endpoint to its next secret version and keeps the replaced one until the overlap ends', async () => {
    const id = await stored();
    await expect(webhooks.rotateSecret(owner, id, rotation(1, 'r1'))).resolves.toMatchObject({
      secretVersion: 2,
      previousSecret: { version: 1, until: '2026-03-02T12:00:00.000Z' },
    });
    await expect(webhooks.rotateSecret(owner, id, rotation(2, 'r2'))).resolves.toMatchObject({
      secretVersion: 3,
      previousSecret: { version: 2 },
    });
    expect((await webhooks.get(owner, id))?.secretVersion).toBe(3);
  });

  it('recognises a repeat of its own landed write, and tells another rotation’s apart', async () => {
    const id = await stored();
    await webhooks.rotateSecret(owner, id, rotation(1, 'mine'));
    await expect(webhooks.rotateSecret(owner, id, rotation(1, 'mine'))).resolves.toMatchObject({
      secretVersion: 2,
    });
    await expect(webhooks.rotateSecret(owner, id, rotation(1, 'theirs'))).resolves.toBe('conflict');
    expect((await webhooks.get(owner, id))?.secretVersion).toBe(2);
  });

  it('rotates nothing of a deleted endpoint or of another owner', async () => {
    const id = await stored();
    await expect(webhooks.rotateSecret('someone-else', id, rotation(1, 'x'))).resolves.toBeUndefined();
    await webhooks.delete(owner, id, '2026-03-01T13:00:00.000Z');
    await expect(webhooks.rotateSecret(owner, id, rotation(1, 'y'))).resolves.toBeUndefined();
  });
});

describe('DynamoDestinationRateLimit on the embedded DynamoDB', () => {
  const clockAt = (ms: number) => ({ now: () => new Date(ms) });
  const SECOND = Date.parse('2026-03-01T12:00:00.000Z');
  let host = 0;
  const freshHost = () => `hooks-${++host}-${Date.now()}.example.com`;

  it('lets the bound through in one second, all workers counted together, and makes the rest wait', async () => {
    const limit = new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND), 50);
    const other = new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND + 999), 50);
    const target = freshHost();
    const waits = await Promise.all(
      Array.from({ length: 120 }, (_, n) => (n % 2 === 0 ? limit : other).admit(target)),
    );
    expect(waits.filter((wait) => wait === 0)).toHaveLength(50);
    expect(waits.filter((wait) => wait === 1)).toHaveLength(50);
    expect(waits.filter((wait) => wait === 2)).toHaveLength(20);
  });

  it('counts each second and each host apart, and lets DynamoDB delete a second’s counter two minutes on', async () => {
    const target = freshHost();
    const now = new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND), 1);
    const next = new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND + 1_000), 1);
    expect(await now.admit(target)).toBe(0);
    expect(await now.admit(target)).toBe(1);
    expect(await now.admit(freshHost())).toBe(0);
    expect(await next.admit(target)).toBe(0);
    const partition = `${HOST_RATE_KEY_PREFIX}${createHash('sha256').update(target).digest('hex')}`;
    const { Item } = await db.send(
      new GetCommand({
        TableName: LOCAL_TABLE_NAMES.webhooks,
        Key: { ownerUserId: partition, webhookId: `${HOST_RATE_KEY_PREFIX}${SECOND / 1000}` },
        ConsistentRead: true,
      }),
    );
    expect(Item).toEqual({
      ownerUserId: partition,
      webhookId: `${HOST_RATE_KEY_PREFIX}${SECOND / 1000}`,
      deliveries: 2,
      ttl: SECOND / 1000 + HOST_RATE_TTL_SECONDS,
    });
    expect(JSON.stringify(Item)).not.toContain(target);
  });

  it('sends another owner’s delivery in the very second one owner floods the host, all workers counted together', async () => {
    const limit = new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND), 50, 10);
    const other = new DynamoDestinationRateLimit(
      db,
      LOCAL_TABLE_NAMES.webhooks,
      clockAt(SECOND + 999),
      50,
      10,
    );
    const target = freshHost();
    const flood = await Promise.all(
      Array.from({ length: 80 }, (_, n) => (n % 2 === 0 ? limit : other).admit(target, 'owner-a')),
    );
    expect(flood.filter((wait) => wait === 0)).toHaveLength(10);
    expect(Math.max(...flood)).toBe(7);
    expect(await other.admit(target, 'owner-b')).toBe(0);
  });

  it('holds the host to its bound across owners, each within its share', async () => {
    const limit = new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND), 50, 10);
    const target = freshHost();
    const waits = await Promise.all(
      Array.from({ length: 60 }, (_, n) => limit.admit(target, `owner-${n % 6}`)),
    );
    expect(waits.filter((wait) => wait === 0)).toHaveLength(50);
    expect(waits.filter((wait) => wait === 1)).toHaveLength(10);
  });

  it('keeps an owner’s counter apart from every endpoint, naming neither the host nor the owner', async () => {
    const target = freshHost();
    const owner = `owner-${randomUUID()}`;
    await new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND), 50, 10).admit(
      target,
      owner,
    );
    const partition = `${HOST_RATE_KEY_PREFIX}${createHash('sha256')
      .update(JSON.stringify([target, owner]))
      .digest('hex')}`;
    const { Item } = await db.send(
      new GetCommand({
        TableName: LOCAL_TABLE_NAMES.webhooks,
        Key: { ownerUserId: partition, webhookId: `${HOST_RATE_KEY_PREFIX}${SECOND / 1000}` },
        ConsistentRead: true,
      }),
    );
    expect(Item).toEqual({
      ownerUserId: partition,
      webhookId: `${HOST_RATE_KEY_PREFIX}${SECOND / 1000}`,
      deliveries: 1,
      ttl: SECOND / 1000 + HOST_RATE_TTL_SECONDS,
    });
    expect(JSON.stringify(Item)).not.toContain(target);
    expect(JSON.stringify(Item)).not.toContain(owner);
  });

  it('never shows a host’s or an owner’s counter in the operator’s listing of every endpoint', async () => {
    const target = freshHost();
    const webhooks = new DynamoWebhookRepository(db, LOCAL_TABLE_NAMES.webhooks);
    const endpoint = {
      id: newWebhookId(randomUUID()),
      ownerUserId: `owner-${randomUUID()}`,
      url: `https://${target}/in`,
      events: ['session.created' as const],
      description: null,
      createdAt: '2026-03-01T12:00:00.000Z',
      createdByKeyId: 'key-1',
    };
    await webhooks.create(endpoint, { maxPerOwner: 16 });
    await new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND), 50, 10).admit(
      target,
      endpoint.ownerUserId,
    );
    const listed = await webhooks.listAll();
    expect(listed).toContainEqual(endpoint);
    expect(listed.filter((one) => !isWebhookId(one.id))).toEqual([]);
  });

  it('never shows a counter among an owner’s endpoints, even an owner whose id is a counter’s partition', async () => {
    const target = freshHost();
    const partition = `${HOST_RATE_KEY_PREFIX}${createHash('sha256').update(target).digest('hex')}`;
    const webhooks = new DynamoWebhookRepository(db, LOCAL_TABLE_NAMES.webhooks);
    const endpoint = {
      id: newWebhookId(randomUUID()),
      ownerUserId: partition,
      url: 'https://hooks.example.com/in',
      events: ['session.created' as const],
      description: null,
      createdAt: '2026-03-01T12:00:00.000Z',
      createdByKeyId: 'key-1',
    };
    await webhooks.create(endpoint, { maxPerOwner: 16 });
    await new DynamoDestinationRateLimit(db, LOCAL_TABLE_NAMES.webhooks, clockAt(SECOND), 50).admit(target);
    expect(await webhooks.list(partition)).toEqual([endpoint]);
  });
});
