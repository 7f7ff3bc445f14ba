import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoEventStore, duePartition } from '#lib/adapters/dynamodb/events';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { EventSink, RoutedEvent } from '#lib/domain/events';
import { minuteBucket } from '#lib/domain/events';
import type { StoredSession } from '#lib/domain/session';
import { sessionEvent } from '#lib/domain/session-events';
import { sweepExpired } from '#lib/use-cases/publish-events';
import type { Fault } from '#test/support/fault-proxy';
import { storedSession } from '#test/support/fixtures';
import { lostAnswer } from '#test/support/lost-answers';
import { LATE_MS, SHORT_LIMITS } from '#test/support/short-aws-limits';
import { queryItems } from '#test/support/stored-items';
import { useTablesBehindProxy } from '#test/support/tables-behind-proxy';

/**
 * Retries converge for the events table's writes (lib/adapters/dynamodb/events.ts), on this run's engine: each
 * write's answer is lost after it landed, or comes after the attempt's deadline, once (the SDK's own retry
 * meets the write) or on every attempt (the write fails, and the processor or the sweep runs it again).
 * Whatever happens, exactly one effect is stored: one event with the content derived, one expiry note or
 * none, the sweep's mark where the sweep left it.
 */
const tables = useTablesBehindProxy(SHORT_LIMITS);
let store: DynamoEventStore;
beforeAll(() => {
  store = new DynamoEventStore(tables().db, LOCAL_TABLE_NAMES.events);
});

/** How the answer to one write goes missing, and whether the SDK's own retries can still meet it. */
const FAULTS: Array<{ name: string; fault: Fault; everyAttempt: boolean }> = [
  {
    name: 'its answer is lost (connection reset)',
    fault: lostAnswer('reset'),
    everyAttempt: false,
  },
  {
    name: 'its answer is lost (InternalServerError)',
    fault: lostAnswer('internal-error'),
    everyAttempt: false,
  },
  {
    name: 'its first answer comes after the deadline',
    fault: { kind: 'late-answer', delayMs: LATE_MS, count: 1 },
    everyAttempt: false,
  },
  {
    name: 'every answer comes after the deadline',
    fault: { kind: 'late-answer', delayMs: LATE_MS, count: 3 },
    everyAttempt: true,
  },
];

/**
 * Runs `write` with `fault` on its operation in the events table: it succeeds when the SDK's retry can
 * meet the landed write; when every answer is late it fails, and is run again as its caller would (the
 * stream's record offered again, the next sweep). Answers the faulted requests the proxy saw.
 */
async function writeThrough(
  fault: (typeof FAULTS)[number],
  operation: string,
  write: () => Promise<unknown>,
): Promise<string[]> {
  await tables().proxy.inject(fault.fault, { operation, table: LOCAL_TABLE_NAMES.events });
  const seen = tables().proxy.requests.length;
  if (fault.everyAttempt) {
    await expect(write()).rejects.toThrow();
    await tables().proxy.clear();
    await write();
  } else {
    await write();
  }
  await tables().proxy.clear();
  return tables()
    .proxy.requests.slice(seen)
    .filter((r) => r.operation === operation && r.table === LOCAL_TABLE_NAMES.events)
    .map((r) => r.fault);
}

/** What is really stored under this partition key of the events table. */
const itemsUnder = (pk: string) => queryItems(tables().truth, LOCAL_TABLE_NAMES.events, { pk });

let counter = 0;
function session(overrides: Partial<StoredSession> = {}): StoredSession {
  counter += 1;
  const hex = counter.toString(16).padStart(12, '0');
  return storedSession({
    id: `fa017e57-0000-4000-8000-${hex}`,
    tokenHash: hex.padStart(64, 'f'),
    createdByUserId: `fault-owner-${counter}`,
    ...overrides,
  });
}

function createdEvent(s: StoredSession): RoutedEvent {
  return sessionEvent(s, 'session.created', s.createdAt, { type: 'api_key', keyId: s.createdByKeyId ?? '' });
}

describe.each(FAULTS)('an events-table write when $name', (fault) => {
  it('record stores the event once, with the content derived', async () => {
    const routed = createdEvent(session());
    const faults = await writeThrough(fault, 'PutItem', () => store.record(routed));
    expect(faults[0]).toBe(fault.fault.kind);
    const items = await itemsUnder(routed.event.id);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      sk: 'event',
      ownerUserId: routed.ownerUserId,
      sessionId: routed.sessionId,
      boardId: routed.boardId,
      type: 'session.created',
    });
    expect(JSON.parse(String(items[0]?.event))).toEqual(routed.event);
    expect(await store.get(routed.event.id)).toEqual(routed.event);
  });

  it('scheduleExpiry leaves one note for the session under its expiry minute, in its partition', async () => {
    const s = session({ expiresAt: `2026-03-0${(counter % 9) + 1}T10:20:30.000Z` });
    const faults = await writeThrough(fault, 'PutItem', () => store.scheduleExpiry(s.id, s.expiresAt));
    expect(faults[0]).toBe(fault.fault.kind);
    const bucket = minuteBucket(new Date(s.expiresAt));
    const notes = (await itemsUnder(`due#${bucket}#${duePartition(s.id)}`)).filter(
      (item) => item.sk === s.id,
    );
    expect(notes).toHaveLength(1);
    expect(notes[0]?.expiresAt).toBe(s.expiresAt);
    expect((await store.dueIn(bucket)).filter((due) => due.sessionId === s.id)).toEqual([
      { sessionId: s.id, expiresAt: s.expiresAt },
    ]);
  });

  it('clearDue removes the note, and only that note', async () => {
    const expiresAt = '2026-04-01T08:00:00.000Z';
    const cleared = session({ expiresAt });
    const kept = session({ expiresAt });
    await store.scheduleExpiry(cleared.id, expiresAt);
    await store.scheduleExpiry(kept.id, expiresAt);
    const faults = await writeThrough(fault, 'DeleteItem', () =>
      store.clearDue({ sessionId: cleared.id, expiresAt }),
    );
    expect(faults[0]).toBe(fault.fault.kind);
    const left = (await store.dueIn(minuteBucket(new Date(expiresAt)))).map((due) => due.sessionId);
    expect(left).toContain(kept.id);
    expect(left).not.toContain(cleared.id);
  });

  it('markSwept moves the mark to the bucket swept, and never back', async () => {
    const before = await store.sweptThrough();
    // Each case sweeps a later minute than the last one marked.
    const bucket = minuteBucket(new Date(Date.parse('2026-05-01T00:00:00.000Z') + counter++ * 60_000));
    expect(before === undefined || before < bucket).toBe(true);
    const faults = await writeThrough(fault, 'UpdateItem', () => store.markSwept(bucket));
    expect(faults[0]).toBe(fault.fault.kind);
    expect(await store.sweptThrough()).toBe(bucket);
    expect(await itemsUnder('sweep')).toEqual([{ pk: 'sweep', sk: 'expiry', bucket }]);
  });
});

describe('the expiry sweep when the answers to its writes are late', () => {
  class RecordingSink implements EventSink {
    published: RoutedEvent[] = [];
    async publish(events: readonly RoutedEvent[]) {
      this.published.push(...events);
    }
  }

  it('ends, run again, in one session.expired, no note left and the mark past the bucket', async () => {
    const sessions = new DynamoSessionRepository(tables().db, LOCAL_TABLE_NAMES.sessions);
    // After every mark the cases above set, so this sweep starts right below its bucket.
    const expiresAt = '2026-06-01T12:00:30.000Z';
    const lapsed = session({ expiresAt });
    await sessions.create(lapsed);
    await store.markSwept('2026-06-01T11:59');
    await store.scheduleExpiry(lapsed.id, expiresAt);
    const sink = new RecordingSink();
    const deps = { store, sinks: [sink], sessions, now: () => new Date('2026-06-01T12:05:00.000Z') };

    // Every write of the sweep in the events table (the event, the note's removal, the mark) lands late.
    for (const operation of ['PutItem', 'DeleteItem', 'UpdateItem']) {
      await tables().proxy.inject(
        { kind: 'late-answer', delayMs: LATE_MS, count: 3 },
        { operation, table: LOCAL_TABLE_NAMES.events },
      );
      // A failed record or removal leaves the bucket for the next run; a failed mark fails the run.
      await sweepExpired(deps).catch(() => undefined);
      await tables().proxy.clear();
    }
    await sweepExpired(deps);

    const expired = sink.published.filter((e) => e.sessionId === lapsed.id);
    // At least once to the sinks, exactly once in the table.
    expect(expired.length).toBeGreaterThanOrEqual(1);
    expect(new Set(expired.map((e) => e.event.id)).size).toBe(1);
    const stored = await itemsUnder(expired[0]?.event.id ?? '');
    expect(stored).toHaveLength(1);
    expect(JSON.parse(String(stored[0]?.event))).toEqual(expired[0]?.event);
    expect(await store.dueIn('2026-06-01T12:00')).toEqual([]);
    expect(await store.sweptThrough()).toBe('2026-06-01T12:04');
  });
});
