import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Where the files' recorded running times are kept (`npm run -s test:timings` rewrites it). */
export const TIMINGS_FILE = join(import.meta.dirname, '..', 'timings.json');

/** Seconds per test file, keyed `project:path`, as recorded on a quiet two-core machine. */
export function recordedTimings(): Record<string, number> {
  return JSON.parse(readFileSync(TIMINGS_FILE, 'utf8')).seconds;
}

/**
 * The order the files start in: the longest first, so that the last files to start are short and the
 * workers finish together. Vitest does this too, but only from its cache of earlier runs, which a fresh
 * clone has not got; there it starts the largest files first, and a short file of slow tests can start
 * last and run alone for its whole length. Here a file's time comes from that cache when there is one,
 * else from the times recorded in test/timings.json; a file in neither starts last (a new file is
 * usually a small one).
 *
 * A project whose files share a process (`isolate: false`, the stack's) starts first: each worker that
 * takes one of its files pays the shared synthesis once, best while every worker is still free.
 */
export class LongestFirstSequencer extends BaseSequencer {
  private readonly recorded = recordedTimings();

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (spec: TestSpecification): number => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      const cached = this.ctx.cache.getFileTestResults(key);
      if (cached?.duration !== undefined) return cached.duration / 1_000;
      return this.recorded[key] ?? 0;
    };
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        Number(a.project.config.isolate) - Number(b.project.config.isolate) ||
        seconds(b) - seconds(a),
    );
  }
}
