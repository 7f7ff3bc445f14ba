import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Where the files' recorded running times are kept (`npm run -s test:timings` rewrites it). */
export const TIMINGS_FILE = join(import.meta.dirname, '..', 'timings.json');

/** The project of the stack's files, which share one synthesis per process (vitest.config.ts). */
const STACK_PROJECT = 'stack';

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
 * The files of a project that share a process (`isolate: false`) run in a worker that keeps its modules
 * from one file to the next. The stack's files, which read one synthesis, run in one worker, one after
 * another: the longest starts first, the other workers take the longest of the rest, and the stack's
 * other files come next, so the first worker to be free again is the one that holds the synthesis, and
 * Vitest hands it the next of them. The files of lighter such projects (the unit tests: many files of
 * milliseconds, for which a process of their own would cost more than their tests; the standalone files)
 * take their place among the rest by their length, so the short ones fill the end.
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
    const longestFirst = [...files].sort((a, b) => seconds(b) - seconds(a));
    const groups = [...new Set(files.map((spec) => spec.project.config.sequence.groupOrder))].sort(
      (a, b) => a - b,
    );
    return groups.flatMap((group) => {
      const inGroup = longestFirst.filter((spec) => spec.project.config.sequence.groupOrder === group);
      const stack = inGroup.filter(
        (spec) => spec.project.name === STACK_PROJECT && !spec.project.config.isolate,
      );
      // The other files, longest first whatever their project: the standalone files that take long start
      // among the isolated ones, and the files of milliseconds fill the end.
      const others = inGroup.filter((spec) => !stack.includes(spec));
      const [first, ...rest] = stack;
      if (!first) return others;
      const beside = Math.max(0, first.project.config.maxWorkers - 1);
      return [first, ...others.slice(0, beside), ...rest, ...others.slice(beside)];
    });
  }
}
