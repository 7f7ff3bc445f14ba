import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { processStreamRecords } from '#lib/adapters/dynamodb/change-feed';
import { DynamoEventStore } from '#lib/adapters/dynamodb/events';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { type StreamRecord, toAttributeMap } from '#lib/adapters/dynamodb/stream-records';
import { DynamoTable, type Item } from '#lib/adapters/dynamodb/table';
import type { TableKey } from '#lib/definitions/tables';
import type { EventSink } from '#lib/domain/events';
import { createLogger, type Logger } from '#lib/platform/logger';
import { type FanOutStarter, sweepExpired } from '#lib/use-cases/publish-events';
import type { WrittenItems } from './dynamodb-writes';

/** How often the change feed reads the sessions table. */
export const LOCAL_POLL_MS = 500;
/** How often the expiry sweep runs locally (AWS: every five minutes). */
export const LOCAL_SWEEP_MS = 2_000;

export interface LocalEventsOptions {
  client: DynamoDBDocumentClient;
  tables: Record<TableKey, string>;
  /** Where recorded events go: webhook delivery and any other consumer append theirs here. */
  sinks: EventSink[];
  /** Starts the back-channel logouts of each cut-off a revoke-all writes, as the stream consumer does. */
  fanOuts?: FanOutStarter;
  logger?: Logger;
  /**
   * The ids of the sessions table's items written since the last poll, when every write is known (the
   * embedded DynamoDB: local/dynamodb-writes.ts). Each poll then reads only those; without it, each poll
   * scans the whole table.
   */
  written?: WrittenItems;
  pollMs?: number;
  sweepMs?: number;
  now?: () => Date;
}

export interface LocalEvents {
  /** Reads the table once more and processes what changed (tests wait on it instead of a timer). */
  poll(): Promise<void>;
  /** Runs the expiry sweep once. */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The local runtime's DynamoDB stream: dynalite has none, so every `pollMs` this reads the sessions
 * table's items written since the last read (all of them, by a scan, when the writes are not known), each
 * strongly consistently, compares each item with the image it saw last, and hands the processor
 * the records a stream with NEW_AND_OLD_IMAGES would carry (INSERT, MODIFY, REMOVE) — the same code path
 * as the stream consumer on AWS. Several writes to one item between two reads arrive as one MODIFY;
 * derivation takes every attribute that appeared, so the events are the same. A record that fails keeps
 * its old image, so the next read offers it again. Items present at start are taken as seen: their events
 * were recorded by the run that wrote them. A timer runs the expiry sweep every `sweepMs`.
 *
 * For development and tests only. Reading only what was written keeps a poll's cost to the writes since
 * the last one, whatever the table holds; a scan per half second of another DynamoDB (DYNAMODB_ENDPOINT)
 * is fine for a laptop's sessions.
 */
export async function startLocalEvents(options: LocalEventsOptions): Promise<LocalEvents> {
  const logger = options.logger ?? createLogger({ component: 'local-events' });
  const now = options.now ?? (() => new Date());
  const store = new DynamoEventStore(options.client, options.tables.events);
  const sessions = new DynamoSessionRepository(options.client, options.tables.sessions);
  const deps = {
    store,
    sinks: options.sinks,
    now,
    sessions,
    ...(options.fanOuts ? { fanOuts: options.fanOuts } : {}),
  };
  const onFailure = (error: unknown, context: Record<string, unknown>) =>
    logger.error('event processing failed; will retry', { ...context, error: String(error) });

  const images = new SessionTableImages(options.client, options.tables.sessions);
  const seen = await images.all();
  // The items to read again on the next poll: those whose change failed kept their old image.
  let retry = new Set<string>();
  let stopped = false;

  const poll = async () => {
    // Only the items written since the last read when the writes are known; every item otherwise.
    const ids = options.written ? new Set([...retry, ...options.written.take()]) : undefined;
    if (ids?.size === 0) return;
    // Read again on the next poll should this one fail before it ends.
    if (ids) retry = ids;
    const current = ids ? await images.withIds(ids) : await images.all();
    const records: StreamRecord[] = [];
    for (const [id, image] of current) {
      const old = seen.get(id);
      if (!old) records.push(streamRecord('INSERT', id, undefined, image));
      else if (JSON.stringify(old) !== JSON.stringify(image))
        records.push(streamRecord('MODIFY', id, old, image));
    }
    for (const id of ids ?? seen.keys()) {
      const old = seen.get(id);
      if (old && !current.has(id)) records.push(streamRecord('REMOVE', id, old, undefined));
    }
    if (records.length === 0) {
      retry = new Set();
      return;
    }
    const { batchItemFailures } = await processStreamRecords(deps, records, onFailure);
    const failed = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
    // A failed item keeps the image seen before it, so its change is offered again on the next read.
    for (const { eventID: id } of records) {
      if (id === undefined || failed.has(id)) continue;
      const image = current.get(id);
      if (image) seen.set(id, image);
      else seen.delete(id);
    }
    retry = failed;
  };
  const sweep = async () => {
    await sweepExpired(deps, onFailure);
  };

  // One chain per timer, never overlapping itself: each run is scheduled when the previous one ended.
  let running: Promise<void> = Promise.resolve();
  const timers = new Set<NodeJS.Timeout>();
  const every = (ms: number, task: () => Promise<void>, name: string) => {
    const schedule = () => {
      if (stopped) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        running = running
          .then(task)
          .catch((error) => logger.error(`local ${name} failed; will retry`, { error: String(error) }))
          .finally(schedule);
      }, ms);
      timer.unref();
      timers.add(timer);
    };
    schedule();
  };
  every(options.pollMs ?? LOCAL_POLL_MS, poll, 'change feed');
  every(options.sweepMs ?? LOCAL_SWEEP_MS, sweep, 'expiry sweep');

  const serialized = (task: () => Promise<void>) => {
    const result = running.then(task);
    running = result.catch(() => undefined);
    return result;
  };
  return {
    poll: () => serialized(poll),
    sweep: () => serialized(sweep),
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}

function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  id: string,
  oldImage: Item | undefined,
  newImage: Item | undefined,
): StreamRecord {
  return {
    eventID: id,
    eventName,
    dynamodb: {
      Keys: { id: { S: id } },
      ...(oldImage ? { OldImage: toAttributeMap(oldImage) } : {}),
      ...(newImage ? { NewImage: toAttributeMap(newImage) } : {}),
    },
  };
}

/** The sessions table's items (sessions and cut-off records) as the change feed reads them, by id. */
class SessionTableImages extends DynamoTable {
  /** Every item, read consistently. */
  async all(): Promise<Map<string, Item>> {
    return byId(await this.scanAll({ ConsistentRead: true }));
  }

  /** The items with these ids that exist, read consistently. */
  async withIds(ids: Set<string>): Promise<Map<string, Item>> {
    return byId(await this.batchGetAll([...ids].map((id) => ({ id }))));
  }
}

function byId(items: Item[]): Map<string, Item> {
  return new Map(items.map((item) => [String(item.id), item]));
}
