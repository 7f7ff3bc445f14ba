import type { CutoffFanOutStart } from '#lib/domain/cutoffs';
import type { RoutedEvent } from '#lib/domain/events';
import { type FailureReport, type ProcessorDeps, recordAndPublish } from '#lib/use-cases/publish-events';
import { cutoffFanOuts, deriveEvents } from './change-events';
import { type BatchResponse, fromAttributeMap, type StreamRecord } from './stream-records';

/**
 * Handles a batch of stream records (Lambda's DynamoDB stream event, or the local change feed's), in
 * order. The first record that fails, and every record after it, are reported in `batchItemFailures`:
 * Lambda retries the batch from that record (and bisects it), so a record is never dropped silently and
 * the records of one session are never handled out of order.
 */
export async function processStreamRecords(
  deps: ProcessorDeps,
  records: readonly StreamRecord[],
  onFailure: FailureReport = () => undefined,
): Promise<BatchResponse> {
  for (const [index, record] of records.entries()) {
    try {
      await recordAndPublish(deps, eventsOf(record, deps.now()));
      // After the events: a failure here fails the record, so both are offered again (the events are
      // stored once by their ids; a fan-out started twice only repeats logouts with the same `sid`).
      const jobs = deps.fanOuts ? fanOutsOf(record) : [];
      if (jobs.length > 0) await deps.fanOuts?.start(jobs);
    } catch (error) {
      onFailure(error, { eventID: record.eventID, eventName: record.eventName });
      return {
        batchItemFailures: records
          .slice(index)
          .map((failed, at) => ({ itemIdentifier: failed.eventID ?? String(index + at) })),
      };
    }
  }
  return { batchItemFailures: [] };
}

/** The logout fan-outs a stream record starts (a cut-off record gaining entries, or moving one later). */
export function fanOutsOf(record: StreamRecord): CutoffFanOutStart[] {
  const name = record.eventName;
  if (name !== 'INSERT' && name !== 'MODIFY') return [];
  const { OldImage, NewImage } = record.dynamodb ?? {};
  return cutoffFanOuts({
    eventName: name,
    oldImage: OldImage ? fromAttributeMap(OldImage) : undefined,
    newImage: NewImage ? fromAttributeMap(NewImage) : undefined,
  });
}

/** The events a stream record stands for. */
export function eventsOf(record: StreamRecord, now: Date): RoutedEvent[] {
  const name = record.eventName;
  if (name !== 'INSERT' && name !== 'MODIFY' && name !== 'REMOVE') return [];
  const { OldImage, NewImage } = record.dynamodb ?? {};
  return deriveEvents(
    {
      eventName: name,
      oldImage: OldImage ? fromAttributeMap(OldImage) : undefined,
      newImage: NewImage ? fromAttributeMap(NewImage) : undefined,
    },
    now,
  );
}
