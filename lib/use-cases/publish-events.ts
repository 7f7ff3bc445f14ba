import type { CutoffFanOutStart } from '#lib/domain/cutoffs';
import { type EventSink, minuteBucket, type RoutedEvent } from '#lib/domain/events';
import type { EventRecorder, ExpiryNotes, SessionRepository } from '#lib/domain/ports';
import { expiredEvent } from '#lib/domain/session-events';

/**
 * Publishing the events of sessions: each change's events recorded once and handed to every sink, and the
 * expiry sweep, which finds the sessions that expired unrevoked. The change feed that calls it is the
 * DynamoDB stream's adapter (lib/adapters/dynamodb/change-feed.ts).
 */

export interface ProcessorDeps {
  store: EventRecorder;
  sinks: readonly EventSink[];
  now: () => Date;
  /**
   * Starts the back-channel logouts of the cut-offs a record's change wrote (lib/use-cases/logout-fan-out.ts);
   * absent where nothing sends logouts.
   */
  fanOuts?: FanOutStarter;
}

/** Starts the logout fan-out of each cut-off entry that appeared or moved: queues each job's first step. */
export interface FanOutStarter {
  start(jobs: readonly CutoffFanOutStart[]): Promise<void>;
}

/** What failed while handling one record or due note; logged by the caller, never swallowed. */
export type FailureReport = (error: unknown, context: Record<string, unknown>) => void;

/**
 * Records and publishes the events of one change: each event stored once (by its fixed id), the expiry of
 * a created session noted for the sweep, then every event handed to every sink. Every step is idempotent,
 * so running it again after a failure anywhere (a lost answer, a sink that threw) ends in the same stored
 * events, and the sinks see each event at least once.
 */
export async function recordAndPublish(deps: ProcessorDeps, events: readonly RoutedEvent[]): Promise<void> {
  if (events.length === 0) return;
  for (const routed of events) {
    await deps.store.record(routed);
    if (routed.sessionId !== null && routed.event.type === 'session.created') {
      await deps.store.scheduleExpiry(routed.sessionId, routed.event.data.session.expiresAt);
    }
  }
  for (const sink of deps.sinks) await sink.publish(events);
}

export interface SweepDeps extends ProcessorDeps {
  store: EventRecorder & ExpiryNotes;
  sessions: Pick<SessionRepository, 'get' | 'applyCutoffs'>;
}

/** How far back a sweep that has never run (or whose mark was lost) looks for due sessions. */
export const FIRST_SWEEP_LOOKBACK_MINUTES = 60;
/** Most minute buckets one sweep goes through; the next run continues from its mark. */
export const MAX_BUCKETS_PER_SWEEP = 24 * 60;
/**
 * Due notes one sweep handles at once. Each note is a chain of about five calls (the session, its
 * cut-off records, the event, the sinks, the note's removal); handled one after another, one run of
 * 240 s got through about 4,800 of them. Side by side, a run goes through ten times as many in a third
 * of that time, and the DynamoDB client's 50 sockets stay enough for them.
 */
export const SWEEP_CONCURRENCY = 32;

/**
 * The expiry sweep: goes through the minute buckets from the last one swept up to now, re-reads each
 * noted session strongly consistently, and records and publishes `session.expired` for those that
 * expired unrevoked (with their cut-offs applied: a session a revoke-all covered before its expiry was
 * revoked, not expired). A minute's notes are read from all its partitions at once and handled
 * `SWEEP_CONCURRENCY` at a time. A note is removed only after its event is published, and the mark moves
 * only past buckets gone through completely, so a sweep that fails half-way is simply run again.
 * Convergent: the event's id is fixed, so a rerun stores nothing twice. Answers how many events it
 * published.
 */
export async function sweepExpired(deps: SweepDeps, onFailure: FailureReport = () => undefined) {
  const now = deps.now();
  const current = minuteBucket(now);
  const mark = await deps.store.sweptThrough();
  let bucketTime =
    mark !== undefined
      ? Date.parse(`${mark}:00.000Z`) + 60_000
      : now.getTime() - FIRST_SWEEP_LOOKBACK_MINUTES * 60_000;
  let published = 0;
  for (let round = 0; round < MAX_BUCKETS_PER_SWEEP; round++, bucketTime += 60_000) {
    const bucket = minuteBucket(new Date(bucketTime));
    if (bucket > current) break;
    let complete = true;
    await eachAtMost(SWEEP_CONCURRENCY, await deps.store.dueIn(bucket), async (due) => {
      if (Date.parse(due.expiresAt) > now.getTime()) {
        complete = false;
        return;
      }
      try {
        const stored = await deps.sessions.get(due.sessionId);
        const session = stored ? (await deps.sessions.applyCutoffs([stored]))[0] : undefined;
        const event = session ? expiredEvent(session) : undefined;
        if (event) {
          await recordAndPublish(deps, [event]);
          published += 1;
        }
        await deps.store.clearDue(due);
      } catch (error) {
        complete = false;
        onFailure(error, { sessionId: due.sessionId, bucket });
      }
    });
    // The current minute can still gain due sessions; a bucket with a failure is gone through again.
    if (!complete || bucket === current) break;
    await deps.store.markSwept(bucket);
  }
  return published;
}

/** Runs `task` on every item, at most `limit` at a time; resolves when all have settled. */
export async function eachAtMost<T>(
  limit: number,
  items: readonly T[],
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
