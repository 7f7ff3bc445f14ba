import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { processStreamRecords } from '#lib/adapters/dynamodb/change-feed';
import { DynamoEventStore, duePartition } from '#lib/adapters/dynamodb/events';
import { toItem } from '#lib/adapters/dynamodb/session-items';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { type StreamRecord, toAttributeMap } from '#lib/adapters/dynamodb/stream-records';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { EventSink, RoutedEvent } from '#lib/domain/events';
import type { StoredSession } from '#lib/domain/session';
import { eventId } from '#lib/domain/session-events';
import { sweepExpired } from '#lib/use-cases/publish-events';
import { storedSession } from '#test/support/fixtures';
import { scanItems } from '#test/support/stored-items';
import { useTablesBehindProxy } from '#test/support/tables-behind-proxy';

/**
 * The stream processor against a real DynamoDB: records in the format AWS's streams deliver them, events
 * stored once under their fixed id whatever is delivered again, failures handed back for a retry.
 */
const tables = useTablesBehindProxy();
let store: DynamoEventStore;
let sessions: DynamoSessionRepository;
beforeAll(() => {
  store = new DynamoEventStore(tables().db, LOCAL_TABLE_NAMES.events);
  sessions = new DynamoSessionRepository(tables().db, LOCAL_TABLE_NAMES.sessions);
});

let counter = 0;
function session(overrides: Partial<StoredSession> = {}): StoredSession {
  counter += 1;
  const hex = counter.toString(16).padStart(12, '0');
  return storedSession({
    id: `7e57e7e0-0000-4000-8000-${hex}`,
    tokenHash: hex.padStart(64, 'c'),
    createdByUserId: `owner-${counter}`,
    ...overrides,
  });
}

function record(
  eventName: StreamRecord['eventName'],
  images: { old?: StoredSession; new?: StoredSession },
  eventID = `rec-${++counter}`,
): StreamRecord {
  return {
    eventID,
    eventName,
    dynamodb: {
      ...(images.old ? { OldImage: toAttributeMap(toItem(images.old)) } : {}),
      ...(images.new ? { NewImage: toAttributeMap(toItem(images.new)) } : {}),
    },
  };
}

class RecordingSink implements EventSink {
  published: RoutedEvent[] = [];
  async publish(events: readonly RoutedEvent[]) {
    this.published.push(...events);
  }
}

const storedEventsOf = (sessionId: string) =>
  scanItems(tables().db, LOCAL_TABLE_NAMES.events, 'sessionId = :s', { ':s': sessionId });

const now = () => new Date('2026-01-02T00:00:00.000Z');

describe('the stream processor', () => {
  it('stores each event once when the same records are processed twice, and publishes both times', async () => {
    const created = session();
    const revoked = { ...created, revokedAt: '2026-01-01T02:00:00.000Z', revokedByUserId: 'admin-cli' };
    const records = [record('INSERT', { new: created }), record('MODIFY', { old: created, new: revoked })];
    const sink = new RecordingSink();
    const deps = { store, sinks: [sink], now };
    expect(await processStreamRecords(deps, records)).toEqual({ batchItemFailures: [] });
    expect(await processStreamRecords(deps, records)).toEqual({ batchItemFailures: [] });

    const stored = await storedEventsOf(created.id);
    expect(stored.map((item) => item.pk).sort()).toEqual(
      [eventId(created.id, 'session.created'), eventId(created.id, 'session.revoked')].sort(),
    );
    expect(sink.published.map((e) => e.event.type)).toEqual([
      'session.created',
      'session.revoked',
      'session.created',
      'session.revoked',
    ]);
    expect(await store.get(eventId(created.id, 'session.revoked'))).toEqual(sink.published[1]?.event);
  });

  it('a lost answer to the event write converges on one stored event', async () => {
    const created = session();
    const then = 'internal-error';
    await tables().proxy.inject(
      { kind: 'lose-answer', then },
      { operation: 'PutItem', table: LOCAL_TABLE_NAMES.events },
    );
    const seen = tables().proxy.requests.length;
    const sink = new RecordingSink();
    const result = await processStreamRecords({ store, sinks: [sink], now }, [
      record('INSERT', { new: created }),
    ]);
    await tables().proxy.clear();
    expect(result).toEqual({ batchItemFailures: [] });
    const puts = tables()
      .proxy.requests.slice(seen)
      .filter((r) => r.operation === 'PutItem' && r.table === LOCAL_TABLE_NAMES.events);
    // The event's put (answer lost), the SDK's retry meeting it, then the expiry note.
    expect(puts.map((r) => r.fault)).toEqual(['lose-answer', 'none', 'none']);
    expect((await storedEventsOf(created.id)).map((item) => item.pk)).toEqual([
      eventId(created.id, 'session.created'),
    ]);
    expect(sink.published.map((e) => e.event.id)).toEqual([eventId(created.id, 'session.created')]);
  });

  it('hands back the failed record and every one after it, and drops none', async () => {
    const first = session();
    const second = session();
    const third = session();
    let calls = 0;
    const failingOnce: EventSink = {
      async publish(events) {
        calls += 1;
        if (events[0]?.sessionId === second.id && calls < 3) throw new Error('sink down');
      },
    };
    const records = [
      record('INSERT', { new: first }, 'r1'),
      record('INSERT', { new: second }, 'r2'),
      record('INSERT', { new: third }, 'r3'),
    ];
    const errors: unknown[] = [];
    const result = await processStreamRecords({ store, sinks: [failingOnce], now }, records, (e) =>
      errors.push(e),
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'r2' }, { itemIdentifier: 'r3' }] });
    expect(errors).toHaveLength(1);
    expect(await processStreamRecords({ store, sinks: [failingOnce], now }, records.slice(1))).toEqual({
      batchItemFailures: [],
    });
    expect((await storedEventsOf(third.id)).map((item) => item.pk)).toEqual([
      eventId(third.id, 'session.created'),
    ]);
  });

  it('the expiry sweep emits session.expired once for an unrevoked session past its expiry, none for a revoked one', async () => {
    const expiresAt = '2026-01-01T23:58:30.000Z';
    const lapsing = session({ expiresAt });
    const revoked = session({ expiresAt, revokedAt: '2026-01-01T12:00:00.000Z', revokedByUserId: 'owner-x' });
    for (const s of [lapsing, revoked]) await sessions.create(s);
    const sink = new RecordingSink();
    const deps = { store, sinks: [sink], now, sessions };
    await processStreamRecords(deps, [
      record('INSERT', { new: lapsing }),
      record('INSERT', { new: revoked }),
    ]);
    sink.published = [];

    expect(await sweepExpired(deps)).toBe(1);
    expect(await sweepExpired(deps)).toBe(0);
    expect(sink.published.map((e) => [e.sessionId, e.event.type, e.event.occurredAt])).toEqual([
      [lapsing.id, 'session.expired', expiresAt],
    ]);
    expect(await store.get(eventId(lapsing.id, 'session.expired'))).toMatchObject({
      data: { session: { status: 'expired' } },
    });
    expect(await store.get(eventId(revoked.id, 'session.expired'))).toBeUndefined();
  });

  it('the expiry sweep finds the notes of every partition of a minute, and those written before there were partitions', async () => {
    // After the minutes the sweep above went through.
    const expiresAt = '2026-01-02T00:05:10.000Z';
    const lapsing = Array.from({ length: 40 }, () => session({ expiresAt }));
    const older = session({ expiresAt });
    for (const s of [...lapsing, older]) await sessions.create(s);
    for (const s of lapsing) await store.scheduleExpiry(s.id, expiresAt);
    // A note as the stream consumer wrote them before the minutes were partitioned.
    await tables().db.send(
      new PutCommand({
        TableName: LOCAL_TABLE_NAMES.events,
        Item: { pk: 'due#2026-01-02T00:05', sk: older.id, expiresAt },
      }),
    );
    const partitions = new Set(lapsing.map((s) => duePartition(s.id)));
    expect(partitions.size).toBeGreaterThan(8);
    const sink = new RecordingSink();
    const deps = { store, sinks: [sink], now: () => new Date('2026-01-02T00:10:00.000Z'), sessions };
    await sweepExpired(deps);
    const expired = new Set(sink.published.map((e) => e.sessionId));
    for (const s of [...lapsing, older]) expect(expired.has(s.id)).toBe(true);
    expect(await store.dueIn('2026-01-02T00:05')).toEqual([]);
  });
});
