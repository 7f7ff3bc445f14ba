/**
 * What `npm run bench` prints while it runs: the expected total at the start, then a line per scenario
 * as it finishes, with the time it took and about how long is left. The expected times are a rough model
 * of a quiet 2-core machine, set from a --quick run (3 min 36 s, 2 cores under load), not a measurement.
 */

/** Rough cost of each unit of work on a quiet 2-core machine. */
export const UNIT_COST_MS = {
  build: 20_000,
  /** One fresh process: spawn, load a bundle, answer one invocation. */
  coldProcess: 250,
  /** One warm-cost process: its start, plus each invocation. */
  warmProcess: 2_000,
  warmInvocation: 0.3,
  /** One revoke-all run: the process and its seed, plus each session. */
  revokeRun: 500,
  revokeSession: 0.15,
} as const;

export interface Scenario {
  label: string;
  expectedMs: number;
}

/** "45 s", "3 min 05 s". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/**
 * Tracks the scenarios of a run in order: `start()` prints the plan, `done(label)` the line of the
 * scenario that just finished. `now` and `write` are given so the formatting can be tested.
 */
export class BenchProgress {
  private readonly startedAt: number;
  private finished = 0;
  private lastAt: number;

  constructor(
    private readonly scenarios: readonly Scenario[],
    private readonly write: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    this.lastAt = this.startedAt;
  }

  get expectedMs(): number {
    return this.scenarios.reduce((sum, s) => sum + s.expectedMs, 0);
  }

  start(): void {
    this.write(
      `bench: ${this.scenarios.length} scenarios, about ${formatDuration(this.expectedMs)} expected ` +
        '(a quiet 2-core machine; a busy one takes longer)',
    );
  }

  /** The scenario `label` finished; it must be the next one planned. */
  done(label: string): void {
    const scenario = this.scenarios[this.finished];
    if (scenario?.label !== label) {
      throw new Error(`bench progress: finished "${label}", expected "${scenario?.label ?? 'nothing'}"`);
    }
    this.finished += 1;
    const at = this.now();
    const took = at - this.lastAt;
    this.lastAt = at;
    const left = this.scenarios.slice(this.finished).reduce((sum, s) => sum + s.expectedMs, 0);
    const tail = this.finished === this.scenarios.length ? 'all done' : `about ${formatDuration(left)} left`;
    this.write(
      `bench: [${this.finished}/${this.scenarios.length}] ${label}: ${formatDuration(took)} ` +
        `(${formatDuration(at - this.startedAt)} so far, ${tail})`,
    );
  }
}
