import { describe, expect, it } from 'vitest';
import {
  type DeliveryMessage,
  handleDeliveryMessage,
  SQS_BATCH_MAX,
  SqsDeliveryScheduler,
} from '#lib/adapters/sqs/delivery-queue';
import type { Board } from '#lib/domain/board';
import {
  type CutoffEntry,
  type CutoffFanOutStart,
  type CutoffScope,
  cutoffScopeKey,
} from '#lib/domain/cutoffs';
import type { StoredSession } from '#lib/domain/session';
import { removeMember, revokeApiKey } from '#lib/use-cases/admin';
import type { LogoutDelivery } from '#lib/use-cases/back-channel-logout';
import {
  expandLogouts,
  FAN_OUT_PAGE_SIZE,
  type FanOutDeps,
  LOGOUTS_PER_PART_PER_SECOND,
  queuedFanOutStarts,
} from '#lib/use-cases/logout-fan-out';
import { revokeUserSessions } from '#lib/use-cases/revoke-user-sessions';
import {
  apiKeyRecord,
  FakeApiKeys,
  FakeBoards,
  FakeKeyThrottling,
  FakeMemberships,
  FakeSessions,
  sequenceRandom,
} from '#test/support/fakes';
import { APP_BOARD, storedSession } from '#test/support/fixtures';
import { memoryLogger } from '#test/support/logs';
import { sqsClientAnswering } from '#test/support/sqs-mock';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
const START = '2026-03-01T12:00:00.000Z';
const CUTOFF = '2026-03-01T11:00:00.000Z';
const BOARD: Board = APP_BOARD;
const SILENT_BOARD: Board = { ...APP_BOARD, boardId: 'board-silent', logoutUrl: undefined };

/**
 * The delivery queue as SQS keeps it: SendMessage and SendMessageBatch put messages, visible after their
 * delay on a fake clock that `next` moves to the earliest visible one. Every call is recorded; `refuse`
 * makes one SendMessageBatch call fail in part, as SQS may.
 */
function fakeSqs() {
  let now = Date.parse(START);
  const waiting: Array<{ visibleAt: number; body: string; order: number }> = [];
  const calls: Array<{ operation: string; entries: number }> = [];
  let order = 0;
  let refuseCall: number | undefined;
  const call = sqsClientAnswering(async (operation, input) => {
    const entries =
      operation === 'SendMessageBatch'
        ? (input.Entries as Array<{ Id: string; MessageBody: string; DelaySeconds: number }>)
        : [{ Id: '0', MessageBody: input.MessageBody as string, DelaySeconds: input.DelaySeconds as number }];
    calls.push({ operation, entries: entries.length });
    if (calls.length === refuseCall) {
      // SQS took the first entry and refused the others.
      const [taken] = entries;
      if (taken)
        waiting.push({ visibleAt: now + taken.DelaySeconds * 1000, body: taken.MessageBody, order: order++ });
      return { Successful: [{ Id: '0' }], Failed: entries.slice(1).map((e) => ({ Id: e.Id, Code: 'x' })) };
    }
    for (const entry of entries) {
      expect(entry.DelaySeconds).toBeLessThanOrEqual(900);
      waiting.push({ visibleAt: now + entry.DelaySeconds * 1000, body: entry.MessageBody, order: order++ });
    }
    return { Successful: entries.map((entry) => ({ Id: entry.Id })), Failed: [] };
  });
  return {
    call,
    calls,
    clock: { now: () => new Date(now) },
    elapsedSeconds: () => (now - Date.parse(START)) / 1000,
    refuse: (nth: number) => {
      refuseCall = nth;
    },
    /** The earliest visible message (oldest first among equals), the clock moved to it. */
    next(): DeliveryMessage | undefined {
      waiting.sort((a, b) => a.visibleAt - b.visibleAt || a.order - b.order);
      const message = waiting.shift();
      if (!message) return undefined;
      now = Math.max(now, message.visibleAt);
      return JSON.parse(message.body) as DeliveryMessage;
    },
  };
}

/** A tenant's sessions and the fan-out's ports on the fake delivery queue. */
function harness(sessions: StoredSession[], boards: Board[] = [BOARD, SILENT_BOARD]) {
  const store = new FakeSessions(sessions);
  const sqs = fakeSqs();
  const scheduler = new SqsDeliveryScheduler(sqs.call, QUEUE_URL, sqs.clock);
  const { logger } = memoryLogger();
  const deps: FanOutDeps = {
    sessions: store,
    boards: new FakeBoards(boards),
    stageAppUrl: undefined,
    appUrlRule: { allowLoopbackHttp: false },
    queue: scheduler,
    logger,
  };
  /** Every logout queued, with when it became visible, and how many fan-out steps ran. */
  const logouts: Array<{ logout: LogoutDelivery; atSeconds: number }> = [];
  let steps = 0;
  /**
   * Runs the delivery worker's part of the fan-out until the queue is empty: each `fanOut` message is one
   * step, as the worker handles it (a step that fails stays on the queue and is offered again, as SQS
   * does); each logout is collected instead of attempted.
   */
  const drain = async (options: { failures?: number } = {}) => {
    let failures = 0;
    for (let message = sqs.next(); message !== undefined; message = sqs.next()) {
      if ('logout' in message) {
        logouts.push({ logout: message.logout, atSeconds: sqs.elapsedSeconds() });
        continue;
      }
      steps += 1;
      const body = JSON.stringify(message);
      try {
        await handleDeliveryMessage({ fanOut: deps } as never, body);
      } catch {
        failures += 1;
        await scheduler.postpone(message, 0);
      }
    }
    expect(failures).toBe(options.failures ?? 0);
  };
  const start = (jobs: CutoffFanOutStart[]) => queuedFanOutStarts(scheduler).start(jobs);
  return { store, sqs, deps, drain, start, logouts, steps: () => steps };
}

const minutes = (n: number) => new Date(Date.parse(CUTOFF) - n * 60_000).toISOString();

/** `count` sessions of distinct users on BOARD, created by owner-1, all before the cut-off. */
function population(count: number, overrides: Partial<StoredSession> = {}): StoredSession[] {
  return Array.from({ length: count }, (_, n) =>
    storedSession({
      id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      tokenHash: String(n).padStart(64, '0'),
      boardId: BOARD.boardId,
      userId: `customer-${n}`,
      createdAt: minutes(30 + (n % 20)),
      expiresAt: '2026-03-31T00:00:00.000Z',
      createdByUserId: 'owner-1',
      ...overrides,
    }),
  );
}

/**
 * Writes one cut-off entry into the records of `scopes`, as a revoke-all's write does, and answers the
 * fan-outs the stream starts for it: one for an entry that appeared, one for an entry moved later.
 */
async function cutoff(
  store: FakeSessions,
  scopes: CutoffScope[],
  id: string,
  at = CUTOFF,
  fields: Partial<CutoffEntry> = {},
): Promise<CutoffFanOutStart[]> {
  const before = await store.readCutoffs(scopes);
  await store.writeCutoff(scopes, {
    entry: { id, at, byUserId: 'owner-1', byKeyId: 'key-1', ...fields },
    now: at,
  });
  return scopes.map((scope) => {
    const record = before.find((r) => cutoffScopeKey(r.scope) === cutoffScopeKey(scope));
    const was = record?.entries.find((entry) => entry.id === id);
    return was ? { scope, entryId: id, at, since: was.at } : { scope, entryId: id, at };
  });
}

const BOARD_SCOPE: CutoffScope = { kind: 'board', boardId: BOARD.boardId };
const sids = (logouts: ReadonlyArray<{ logout: LogoutDelivery }>) => logouts.map((l) => l.logout.sessionId);
const countsBySid = (logouts: ReadonlyArray<{ logout: LogoutDelivery }>) => {
  const counts = new Map<string, number>();
  for (const sid of sids(logouts)) counts.set(sid, (counts.get(sid) ?? 0) + 1);
  return counts;
};

describe('the logouts of a revoke-all covering 10,000 sessions', () => {
  it('queues one logout per covered session, in batches of at most ten, a page of at most 500 per step, released within 60 s', async () => {
    const sessions = population(10_000);
    const h = harness(sessions);
    // A board revoke-all writes its entry twice, before and after its count: both writes start a
    // fan-out, the second for what moving the entry later added.
    const first = await cutoff(h.store, [BOARD_SCOPE], 'entry', CUTOFF);
    const last = await cutoff(h.store, [BOARD_SCOPE], 'entry', minutes(-1), { until: 1_900_000_000 });
    expect(last).toEqual([{ scope: BOARD_SCOPE, entryId: 'entry', at: minutes(-1), since: CUTOFF }]);
    await h.start([...first, ...last]);
    await h.drain();

    const counts = countsBySid(h.logouts);
    expect(counts.size).toBe(10_000);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(counts.keys())).toEqual(new Set(sessions.map((s) => s.id)));
    for (const { logout } of h.logouts.slice(0, 3)) {
      expect(logout).toEqual({
        eventId: 'cutoff:entry',
        sessionId: expect.any(String),
        boardId: BOARD.boardId,
        userId: expect.stringMatching(/^customer-/),
        tenant: { kind: 'organization', id: 'org-a' },
        attempt: 0,
      });
    }

    // Bounded batches: every queue call is one SendMessageBatch of at most ten messages, and every read a
    // page of FAN_OUT_PAGE_SIZE at most.
    expect(new Set(h.sqs.calls.map((c) => c.operation))).toEqual(new Set(['SendMessageBatch']));
    expect(Math.max(...h.sqs.calls.map((c) => c.entries))).toBe(SQS_BATCH_MAX);
    expect(new Set(h.store.coveredLimits)).toEqual(new Set([FAN_OUT_PAGE_SIZE]));
    const queued = h.sqs.calls.reduce((sum, c) => sum + c.entries, 0);
    // 10,000 logouts, 2 starts, 2 x 16 part steps, and a next step for every part page that was full.
    const parts = h.store.coveredParts;
    const continuations = h.steps() - 2 - 2 * parts;
    expect(queued).toBe(10_000 + 2 + 2 * parts + continuations);
    expect(continuations).toBeLessThanOrEqual(Math.ceil(10_000 / FAN_OUT_PAGE_SIZE) + parts);
    expect(h.sqs.calls.length).toBeLessThanOrEqual(Math.ceil(queued / SQS_BATCH_MAX) + h.steps());

    // Paced: no part releases more than LOGOUTS_PER_PART_PER_SECOND a second, and the last logout of
    // 10,000 is released within 60 s of the start.
    const perSecond = new Map<number, number>();
    for (const { atSeconds } of h.logouts) perSecond.set(atSeconds, (perSecond.get(atSeconds) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(parts * LOGOUTS_PER_PART_PER_SECOND);
    expect(Math.max(...h.logouts.map((l) => l.atSeconds))).toBeLessThan(60);
  });

  it('converges when the stream record is offered again: the job runs twice, nothing is skipped, and a repeat names the same session', async () => {
    const sessions = population(3_000);
    const h = harness(sessions);
    const jobs = await cutoff(h.store, [BOARD_SCOPE], 'entry-1');
    await h.start(jobs);
    await h.start(jobs);
    await h.drain();
    const counts = countsBySid(h.logouts);
    expect(new Set(counts.keys())).toEqual(new Set(sessions.map((s) => s.id)));
    expect([...counts.values()].every((n) => n === 2)).toBe(true);
  });

  it('converges when a step fails half-way (SQS refuses part of a batch): the step runs again and skips nothing', async () => {
    const sessions = population(2_000);
    const h = harness(sessions);
    const jobs = await cutoff(h.store, [BOARD_SCOPE], 'entry-1');
    h.sqs.refuse(5);
    await h.start(jobs);
    await h.drain({ failures: 1 });
    const counts = countsBySid(h.logouts);
    expect(new Set(counts.keys())).toEqual(new Set(sessions.map((s) => s.id)));
    // Only the failed step's sessions may come twice; every logout names a covered session.
    expect([...counts.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(FAN_OUT_PAGE_SIZE);
  });
});

describe('which sessions a revoke-all’s logouts name', () => {
  const board2: Board = { ...BOARD, boardId: 'board-2' };

  it('{userId}: the tenant’s sessions of the user on every board, each once although two records hold the same entry', async () => {
    // owner-1 and colleague are org-a's members; owner-1's sessions are in its own scope and its org's.
    const mine = population(3, { userId: 'u' }).map((s, n) => ({
      ...s,
      boardId: n === 0 ? BOARD.boardId : 'board-2',
    }));
    const colleagues = population(1, { userId: 'u', createdByUserId: 'colleague' }).map((s) => ({
      ...s,
      id: '11111111-0000-4000-8000-000000000001',
    }));
    const outsiders = population(1, {
      userId: 'u',
      createdByUserId: 'outsider',
      tenant: { kind: 'keyOwner', id: 'outsider' },
    }).map((s) => ({ ...s, id: '22222222-0000-4000-8000-000000000001' }));
    const h = harness([...mine, ...colleagues, ...outsiders], [BOARD, board2]);
    const memberships = new FakeMemberships([
      { orgId: 'org-a', userId: 'owner-1' },
      { orgId: 'org-a', userId: 'colleague' },
    ]);
    const random = sequenceRandom();
    await revokeUserSessions(
      {
        sessions: h.store,
        cutoffs: h.store,
        boards: h.deps.boards,
        memberships,
        clock: { now: () => new Date(START) },
        random,
      },
      { userId: 'owner-1', keyId: 'key-1' },
      { userId: 'u' },
    );
    // Every record and entry the call wrote starts a fan-out, as the stream consumer would.
    const records = await h.store.readCutoffs([
      { kind: 'creatorUser', creatorUserId: 'owner-1', userId: 'u' },
      { kind: 'tenantUser', tenant: { kind: 'organization', id: 'org-a' }, userId: 'u' },
    ]);
    expect(records).toHaveLength(2);
    await h.start(
      records.flatMap((record) =>
        record.entries.map((entry) => ({ scope: record.scope, entryId: entry.id, at: entry.at })),
      ),
    );
    await h.drain();
    const counts = countsBySid(h.logouts);
    expect(Object.fromEntries(counts)).toEqual(
      Object.fromEntries([...mine, ...colleagues].map((s) => [s.id, 1])),
    );
  });

  it('{userId, boardId}: only that board’s sessions', async () => {
    const onBoard = population(2, { userId: 'u' });
    const elsewhere = population(1, { userId: 'u', boardId: board2.boardId }).map((s) => ({
      ...s,
      id: '33333333-0000-4000-8000-000000000001',
    }));
    const h = harness([...onBoard, ...elsewhere], [BOARD, board2]);
    const scope: CutoffScope = {
      kind: 'creatorBoardUser',
      creatorUserId: 'owner-1',
      boardId: BOARD.boardId,
      userId: 'u',
    };
    await h.start(await cutoff(h.store, [scope], 'entry-1'));
    await h.drain();
    expect(sids(h.logouts).sort()).toEqual(onBoard.map((s) => s.id).sort());
  });

  it('a record written before records were per tenant: only the sessions of the creators its entry names', async () => {
    const owners = population(2, { userId: 'u' });
    const colleagues = population(1, { userId: 'u', createdByUserId: 'colleague' }).map((s) => ({
      ...s,
      id: '44444444-0000-4000-8000-000000000001',
    }));
    const h = harness([...owners, ...colleagues]);
    const scope: CutoffScope = { kind: 'boardUser', boardId: BOARD.boardId, userId: 'u' };
    await h.start(await cutoff(h.store, [scope], 'legacy', CUTOFF, { creators: ['owner-1'] }));
    await h.drain();
    expect(sids(h.logouts).sort()).toEqual(owners.map((s) => s.id).sort());
  });

  it('leaves out sessions revoked on their own, expired before the cut-off, created after it, or on a board without a logout URL', async () => {
    const [covered, ownRevoke, expired, later, silent] = population(5);
    const sessions = [
      covered as StoredSession,
      { ...(ownRevoke as StoredSession), revokedAt: minutes(40), revokedByUserId: 'owner-1' },
      { ...(expired as StoredSession), expiresAt: minutes(1) },
      { ...(later as StoredSession), createdAt: minutes(-5) },
      { ...(silent as StoredSession), boardId: SILENT_BOARD.boardId },
    ];
    const h = harness(sessions);
    await h.start(
      await cutoff(h.store, [BOARD_SCOPE, { kind: 'board', boardId: SILENT_BOARD.boardId }], 'entry-1'),
    );
    await h.drain();
    expect(sids(h.logouts)).toEqual([covered?.id]);
  });

  it('sends nothing for sessions an earlier cut-off ended, even one of another record, and everything for those it did not', async () => {
    const [first, second] = population(2, { userId: 'u' });
    const h = harness([first as StoredSession, { ...(second as StoredSession), createdAt: minutes(-10) }]);
    const userScope: CutoffScope = { kind: 'creatorUser', creatorUserId: 'owner-1', userId: 'u' };
    await h.start([
      ...(await cutoff(h.store, [userScope], 'earlier')),
      ...(await cutoff(h.store, [BOARD_SCOPE], 'later', minutes(-20))),
    ]);
    await h.drain();
    expect(h.logouts.map((l) => [l.logout.sessionId, l.logout.eventId])).toEqual([
      [first?.id, 'cutoff:earlier'],
      [second?.id, 'cutoff:later'],
    ]);
  });

  it('logs out the sessions of a call that failed after its first cut-off once, from that cut-off, when its retry covers them again', async () => {
    const [session] = population(1);
    const h = harness([session as StoredSession]);
    const jobs = [
      ...(await cutoff(h.store, [BOARD_SCOPE], 'failed-call')),
      ...(await cutoff(h.store, [BOARD_SCOPE], 'retry', minutes(-1))),
    ];
    // The retry's last write, counted past the failed call's cut-off.
    await h.store.writeCutoff([BOARD_SCOPE], {
      entry: { id: 'retry', at: minutes(-2), byUserId: 'owner-1', byKeyId: 'key-1', until: 1_900_000_000 },
      countedThrough: minutes(-1),
      now: minutes(-2),
    });
    jobs.push({ scope: BOARD_SCOPE, entryId: 'retry', at: minutes(-2), since: minutes(-1) });
    await h.start(jobs);
    await h.drain();
    expect(h.logouts.map((l) => l.logout.eventId)).toEqual(['cutoff:failed-call']);
  });

  it('covers the stage and an external user across tenants by scanning, as the operators’ cut-offs name them', async () => {
    const [a, b, c] = population(3);
    const other = {
      ...(b as StoredSession),
      userId: 'shared',
      tenant: { kind: 'keyOwner', id: 'x' },
    } as const;
    const h = harness([a as StoredSession, other, { ...(c as StoredSession), userId: 'shared' }]);
    await h.start([
      ...(await cutoff(h.store, [{ kind: 'user', userId: 'shared' }], 'user-entry', minutes(10))),
      ...(await cutoff(h.store, [{ kind: 'stage' }], 'stage-entry')),
    ]);
    await h.drain();
    expect(Object.fromEntries(h.logouts.map((l) => [l.logout.sessionId, l.logout.eventId]))).toEqual({
      [String(a?.id)]: 'cutoff:stage-entry',
      [other.id]: 'cutoff:user-entry',
      [String(c?.id)]: 'cutoff:user-entry',
    });
    expect(h.store.calls.filter((c) => c.startsWith('coveredPage:'))).toContain('coveredPage:allOfUser');
    expect(h.store.calls.filter((c) => c.startsWith('coveredPage:'))).toContain('coveredPage:stage');
  });

  it('logs out a revoked key’s and a removed member’s sessions by scanning, and raises each record’s expiry to the longest-lived of them', async () => {
    const [byKey, otherKey, member, memberOwnTenant] = population(4);
    const h = harness([
      { ...(byKey as StoredSession), createdByKeyId: 'key-9', expiresAt: '2030-01-01T00:00:00.000Z' },
      { ...(otherKey as StoredSession), createdByKeyId: 'key-other' },
      { ...(member as StoredSession), createdByUserId: 'member', expiresAt: '2029-01-01T00:00:00.000Z' },
      // The member's own tenant's session on the organization's public board: not the organization's to end.
      {
        ...(memberOwnTenant as StoredSession),
        createdByUserId: 'member',
        tenant: { kind: 'keyOwner', id: 'member' },
        expiresAt: '2031-01-01T00:00:00.000Z',
      },
    ]);
    const operator = { clock: { now: () => new Date(CUTOFF) }, actor: 'cli:ops', random: sequenceRandom() };
    await revokeApiKey(
      {
        apiKeys: new FakeApiKeys([apiKeyRecord('h', { keyId: 'key-9' })]),
        throttling: new FakeKeyThrottling(),
        cutoffs: h.store,
        ...operator,
      },
      'key-9',
      { endSessions: true },
    );
    await removeMember(
      {
        memberships: new FakeMemberships([{ orgId: BOARD.orgId, userId: 'member' }]),
        cutoffs: h.store,
        ...operator,
      },
      BOARD.orgId,
      'member',
      { endSessions: true },
    );
    const keyScope: CutoffScope = { kind: 'key', keyId: 'key-9' };
    const memberScope: CutoffScope = { kind: 'orgCreator', orgId: BOARD.orgId, creatorUserId: 'member' };
    const records = await h.store.readCutoffs([keyScope, memberScope]);
    await h.start(
      records.flatMap((r) => r.entries.map((e) => ({ scope: r.scope, entryId: e.id, at: e.at }))),
    );
    await h.drain();

    expect(sids(h.logouts).sort()).toEqual([byKey?.id, member?.id].sort());
    expect(h.store.calls).toContain('coveredPage:key');
    expect(h.store.calls).toContain('coveredPage:orgCreator');
    // Each record lives as long as what it ended, and no longer than its own tenant's sessions.
    const expiryOf = async (scope: CutoffScope) =>
      h.store.storedCutoffs().find((r) => r.key === cutoffScopeKey(scope))?.expiry;
    expect(await expiryOf(keyScope)).toBe(Date.parse('2030-01-01T00:00:00.000Z') / 1000);
    expect(await expiryOf(memberScope)).toBe(Date.parse('2029-01-01T00:00:00.000Z') / 1000);
  });

  it('runs its own range when its entry was merged into a later one meanwhile: nothing is skipped', async () => {
    const [early, late] = population(2);
    const h = harness([early as StoredSession, { ...(late as StoredSession), createdAt: minutes(-5) }]);
    const merged = await cutoff(h.store, [BOARD_SCOPE], 'merged-away');
    // The next cut-off's job runs at once: it leaves the earlier session to the earlier cut-off.
    await h.start(await cutoff(h.store, [BOARD_SCOPE], 'later-1', minutes(-10)));
    await h.drain();
    expect(sids(h.logouts)).toEqual([late?.id]);
    // Seven more of the same writer: the record keeps eight, so the writer's oldest is merged away.
    for (let n = 2; n <= 8; n++) await cutoff(h.store, [BOARD_SCOPE], `later-${n}`, minutes(-10 - n));
    const [record] = await h.store.readCutoffs([BOARD_SCOPE]);
    expect(record?.entries.map((e) => e.id)).not.toContain('merged-away');
    // The merged-away entry's job, queued before, runs only now: its own range still ends the session.
    await h.start(merged);
    await h.drain();
    expect(sids(h.logouts).sort()).toEqual([early?.id, late?.id].sort());
  });

  it('raises its record’s expiry to the latest expiry of the sessions it reads', async () => {
    const sessions = population(3).map((s, n) => ({ ...s, expiresAt: `2027-0${n + 1}-01T00:00:00.000Z` }));
    const h = harness(sessions);
    await h.start(await cutoff(h.store, [BOARD_SCOPE], 'entry-1', CUTOFF, { until: 1_800_000_000 }));
    await h.drain();
    const [stored] = h.store.storedCutoffs();
    expect(stored?.coversUntil).toBe(Date.parse('2027-03-01T00:00:00.000Z') / 1000);
    expect(stored?.expiry).toBe(stored?.coversUntil);
  });

  it('ends the job without a logout when its record or entry is gone', async () => {
    const h = harness(population(3));
    const step = await expandLogouts(h.deps, { scope: BOARD_SCOPE, entryId: 'never-written' });
    expect(step).toEqual({ logouts: 0, continued: false });
    expect(h.sqs.calls).toEqual([]);
  });
});
