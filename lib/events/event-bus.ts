/**
 * The EventBridge sink: every event goes to the stack's bus (`PutEvents`), so operators can route them
 * with rules. Source `embed-sessions`, detail-type the event's type, detail the event as a webhook
 * receives it plus what routes it (the owner, the board).
 */

import type { AwsJsonCall } from '#lib/aws/json-protocol';
import type { EventSink, RoutedEvent } from '#lib/domain/events';

/** The `source` of every event the service puts on its bus. */
export const EVENT_BUS_SOURCE = 'embed-sessions';
/** PutEvents takes at most ten entries per call. */
export const PUT_EVENTS_MAX_ENTRIES = 10;

/** An entry the bus refused: the whole publish fails, so the stream record is retried. */
export class EventBusError extends Error {
  constructor(readonly failures: Array<{ eventId: string; code: string }>) {
    super(`EventBridge refused ${failures.length} event(s): ${failures.map((f) => f.code).join(', ')}`);
    this.name = 'EventBusError';
  }
}

export class EventBusSink implements EventSink {
  constructor(
    private readonly call: AwsJsonCall,
    private readonly busName: string,
  ) {}

  async publish(events: readonly RoutedEvent[]): Promise<void> {
    for (let start = 0; start < events.length; start += PUT_EVENTS_MAX_ENTRIES) {
      const batch = events.slice(start, start + PUT_EVENTS_MAX_ENTRIES);
      const out = await this.call('PutEvents', {
        Entries: batch.map((routed) => ({
          EventBusName: this.busName,
          Source: EVENT_BUS_SOURCE,
          DetailType: routed.event.type,
          Time: Math.floor(Date.parse(routed.event.occurredAt) / 1000),
          Detail: JSON.stringify({
            ...routed.event,
            ownerUserId: routed.ownerUserId,
            boardId: routed.boardId,
          }),
        })),
      });
      const entries = (out.Entries as Array<{ ErrorCode?: string; EventId?: string }> | undefined) ?? [];
      const failures = batch.flatMap((routed, index) => {
        const entry = entries[index];
        return entry?.EventId && !entry.ErrorCode
          ? []
          : [{ eventId: routed.event.id, code: entry?.ErrorCode ?? 'NoEntry' }];
      });
      if (Number(out.FailedEntryCount ?? 0) > 0 || failures.length > 0) throw new EventBusError(failures);
    }
  }
}
