import { describe, expect, it } from 'vitest';
import { DUE_PARTITIONS, duePartition } from '#lib/adapters/dynamodb/events';
import type { EventSink, RoutedEvent } from '#lib/domain/events';
import { minuteBucket } from '#lib/domain/events';
import type { DueNote } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { eachAtMost, SWEEP_CONCURRENCY, type SweepDeps, sweepExpired } from '#lib/use-cases/publish-events';
import { storedSession } from '#test/support/fixtures';

/**
 * The expiry sweep's wall time, measured in rounds rather than seconds: every call to the store, the
 * sessions or a sink takes one round trip, and the calls in flight together share it. A run of 240 s at
 * ~10 ms a round trip has 24,000 rounds.
 */
const RUN_ROUNDS = 24_000;
/** Due notes a serial sweep got through in one run: five round trips each (see SWEEP_CONCURRENCY). */
const SERIAL_CAPACITY = 4_800;

/** Resolves the calls in flight together, one round at a time, counting rounds and the most in flight. */
class Rounds {
  count = 0;
  mostInFlight = 0;
  private pending: Array<() => void> = [];

  /** One call's round trip. */
  trip(): Promise<void> {
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.mostInFlight = Math.max(this.mostInFlight, this.pending.length);
    });
  }

  /** Runs `work` to its end, answering every call in flight once per round. */
  async drive<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const result = work.finally(() => {
      done = true;
    });
    while (!done) {
      // Let every call that can start now start, then answer them together.
      await new Promise((resolve) => setImmediate(resolve));
      const answering = this.pending;
      this.pending = [];
      if (answering.length > 0) this.count += 1;
      for (const resolve of answering) resolve();
    }
    return result;
  }
}

const NOW = new Date('2026-03-01T00:10:30.000Z');

/** A store, sessions and a sink in memory, every call one round trip. */
function world(notes: number, legacy = 0) {
  const rounds = new Rounds();
  const expiresAt = '2026-03-01T00:08:00.000Z';
  const due = new Map<string, DueNote>();
  const sessions = new Map<string, StoredSession>();
  for (let i = 0; i < notes + legacy; i++) {
    const id = `5eeeeeee-0000-4000-8000-${String(i).padStart(12, '0')}`;
    sessions.set(id, storedSession({ id, expiresAt, createdAt: '2026-03-01T00:00:00.000Z' }));
    due.set(id, { sessionId: id, expiresAt, ...(i >= notes ? { legacy: true as const } : {}) });
  }
  const recorded = new Set<string>();
  const published: RoutedEvent[] = [];
  let mark: string | undefined = '2026-03-01T00:07';
  const sink: EventSink = {
    publish: async (events) => {
      await rounds.trip();
      published.push(...events);
    },
  };
  const deps: SweepDeps = {
    now: () => NOW,
    sinks: [sink],
    store: {
      record: async (routed) => {
        await rounds.trip();
        recorded.add(routed.event.id);
        return true;
      },
      scheduleExpiry: async () => {
        await rounds.trip();
      },
      dueIn: async (bucket) => {
        // Every partition of the minute at once: one round trip.
        await rounds.trip();
        return [...due.values()].filter((note) => minuteBucket(new Date(note.expiresAt)) === bucket);
      },
      clearDue: async (note) => {
        await rounds.trip();
        due.delete(note.sessionId);
      },
      sweptThrough: async () => {
        await rounds.trip();
        return mark;
      },
      markSwept: async (bucket) => {
        await rounds.trip();
        mark = bucket;
      },
    },
    sessions: {
      get: async (id) => {
        await rounds.trip();
        return sessions.get(id);
      },
      applyCutoffs: async (found) => {
        await rounds.trip();
        return [...found];
      },
    },
  };
  return { deps, rounds, due, recorded, published, mark: () => mark };
}

describe('the expiry sweep at ten times what a serial run handled', () => {
  it(`goes through ${10 * SERIAL_CAPACITY} due notes within the rounds of one run, publishing each once`, async () => {
    const { deps, rounds, due, recorded, published, mark } = world(10 * SERIAL_CAPACITY);
    const count = await rounds.drive(sweepExpired(deps));
    expect(count).toBe(10 * SERIAL_CAPACITY);
    expect(recorded.size).toBe(10 * SERIAL_CAPACITY);
    expect(published).toHaveLength(10 * SERIAL_CAPACITY);
    expect(due.size).toBe(0);
    // Up to the minute before the current one, which can still gain notes.
    expect(mark()).toBe('2026-03-01T00:09');
    // Ten times the notes take a third of the wall time a serial run took for the notes it could handle.
    expect(rounds.count).toBeLessThan(RUN_ROUNDS / 3);
  });

  it(`never has more than ${SWEEP_CONCURRENCY} notes in flight, whatever their number`, async () => {
    const { deps, rounds } = world(2_000);
    await rounds.drive(sweepExpired(deps));
    // A note has at most one call in flight at a time.
    expect(rounds.mostInFlight).toBeLessThanOrEqual(SWEEP_CONCURRENCY);
    expect(rounds.mostInFlight).toBe(SWEEP_CONCURRENCY);
  });

  it('also sweeps the notes written before the minutes were partitioned', async () => {
    const { deps, rounds, due, published } = world(5, 3);
    expect(await rounds.drive(sweepExpired(deps))).toBe(8);
    expect(published).toHaveLength(8);
    expect(due.size).toBe(0);
  });
});

describe('eachAtMost', () => {
  it('runs every item once, at most `limit` at a time', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await eachAtMost(3, [1, 2, 3, 4, 5, 6, 7], async (item) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      seen.push(item);
      running -= 1;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('does nothing for no items', async () => {
    await eachAtMost(3, [], async () => {
      throw new Error('never called');
    });
  });
});

describe('due notes are spread over the partitions of their minute', () => {
  it(`puts sessions in all ${DUE_PARTITIONS} partitions, evenly, each always in the same one`, () => {
    const counts = new Array(DUE_PARTITIONS).fill(0);
    for (let i = 0; i < 16_000; i++) counts[duePartition(`id-${i}`)] += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
    expect(duePartition('id-1')).toBe(duePartition('id-1'));
  });
});
