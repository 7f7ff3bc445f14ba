/**
 * The EventBridge sink: every event goes to the stack's bus (`PutEvents`), so operators can route them
 * with rules. Source `embed-sessions`, detail-type the event's type, detail the event as a webhook
 * receives it plus what routes it (the owner, the board).
 */
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { EventSink, RoutedEvent } from '#lib/domain/events';

/** The `source` of every event the service puts on its bus. */
export const EVENT_BUS_SOURCE = 'embed-sessions';
/** PutEvents takes at most ten entries per call. */
export const PUT_EVENTS_MAX_ENTRIES = 10;
/**
 * EventBridge's 256 KB: the most one entry may hold, and the most the entries of one PutEvents call may
 * hold together. Measured here on the event as EventBridge represents it (`eventBridgeEventBytes`).
 */
export const EVENT_BUS_MAX_BYTES = 256 * 1024;

/** One entry of a PutEvents call. */
export interface PutEventsEntry {
  EventBusName: string;
  Source: string;
  DetailType: string;
  /** When the event occurred, to the second (EventBridge keeps no finer time). */
  Time: Date;
  Detail: string;
}

/** The entry that puts `routed` on the bus `busName`. */
export function putEventsEntry(busName: string, routed: RoutedEvent): PutEventsEntry {
  return {
    EventBusName: busName,
    Source: EVENT_BUS_SOURCE,
    DetailType: routed.event.type,
    Time: new Date(Math.floor(Date.parse(routed.event.occurredAt) / 1000) * 1000),
    Detail: JSON.stringify({
      ...routed.event,
      ownerUserId: routed.ownerUserId,
      boardId: routed.boardId,
    }),
  };
}

/**
 * What EventBridge adds around an entry's detail when it represents the event (its id, account, time,
 * region, resources), at their longest: a 36-character id, a 12-digit account, a 32-character region
 * (the longest today has 14).
 */
const ENVELOPE = {
  version: '0',
  id: '00000000-0000-0000-0000-000000000000',
  account: '000000000000',
  time: '2000-01-01T00:00:00Z',
  region: 'r'.repeat(32),
  resources: [] as string[],
};

/**
 * The bytes of the event EventBridge makes of `entry` (its JSON as a rule's target receives it: the
 * envelope, with the detail as an object). EventBridge counts an entry's size as its source, detail-type,
 * detail, resources and 14 bytes of time; since 2025 its PutEvents reference says the size includes "the
 * necessary characters and keys of the JSON representation of the event", so this, the larger measure,
 * is the one held below EVENT_BUS_MAX_BYTES.
 */
export function eventBridgeEventBytes(entry: Omit<PutEventsEntry, 'EventBusName' | 'Time'>): number {
  const envelope = JSON.stringify({ ...ENVELOPE, 'detail-type': entry.DetailType, source: entry.Source });
  return (
    Buffer.byteLength(envelope, 'utf8') +
    Buffer.byteLength(',"detail":', 'utf8') +
    Buffer.byteLength(entry.Detail, 'utf8')
  );
}

/**
 * The calls that put `entries`: in order, at most PUT_EVENTS_MAX_ENTRIES each and, together, below
 * EVENT_BUS_MAX_BYTES (a call of ten entries of 30 KB would be refused whole).
 */
export function putEventsBatches<E extends PutEventsEntry>(entries: readonly E[]): E[][] {
  const batches: E[][] = [];
  let batch: E[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = eventBridgeEventBytes(entry);
    if (
      batch.length === PUT_EVENTS_MAX_ENTRIES ||
      (batch.length > 0 && bytes + size >= EVENT_BUS_MAX_BYTES)
    ) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** An entry the bus refused: the whole publish fails, so the stream record is retried. */
export class EventBusError extends Error {
  constructor(readonly failures: Array<{ eventId: string; code: string }>) {
    super(`EventBridge refused ${failures.length} event(s): ${failures.map((f) => f.code).join(', ')}`);
    this.name = 'EventBusError';
  }
}

export class EventBusSink implements EventSink {
  constructor(
    private readonly eventBridge: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async publish(events: readonly RoutedEvent[]): Promise<void> {
    const entries = events.map((routed) => ({
      ...putEventsEntry(this.busName, routed),
      eventId: routed.event.id,
    }));
    for (const batch of putEventsBatches(entries)) {
      const out = await this.eventBridge.send(
        new PutEventsCommand({
          Entries: batch.map(({ eventId: _, ...entry }) => entry),
        }),
      );
      const answered = out.Entries ?? [];
      const failures = batch.flatMap(({ eventId }, index) => {
        const entry = answered[index];
        return entry?.EventId && !entry.ErrorCode ? [] : [{ eventId, code: entry?.ErrorCode ?? 'NoEntry' }];
      });
      if (Number(out.FailedEntryCount ?? 0) > 0 || failures.length > 0) throw new EventBusError(failures);
    }
  }
}
