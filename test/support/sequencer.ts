import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Where the files' recorded running times are kept (`npm run -s test:timings` rewrites it). */
export const TIMINGS_FILE = join(import.meta.dirname, '..', 'timings.json');

/** The project of the stack's files, most of which share one synthesis per process (vitest.config.ts). */
export const STACK_PROJECT = 'stack';

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
 * The files of a project that share a process (`isolate: false`) keep it from one file to the next only
 * while the next file Vitest hands that worker is of the same project; any other file ends the process.
 * So each such project's files start one after another. The stack's files (the project named
 * `STACK_PROJECT`, most of whose files read one synthesis) start with its longest, the other workers take
 * the longest isolated files, and the stack's other files come next, so the first worker to be free again
 * is the one that holds the synthesis. The heaviest of the other shared projects (the standalone files)
 * follows, then the isolated files, then the lighter ones (the unit tests: many files of milliseconds,
 * for which a process of their own would cost more than their tests), which fill the end.
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
    const total = (specs: TestSpecification[]) => specs.reduce((sum, spec) => sum + seconds(spec), 0);
    const longestFirst = [...files].sort((a, b) => seconds(b) - seconds(a));
    const groups = [...new Set(files.map((spec) => spec.project.config.sequence.groupOrder))].sort(
      (a, b) => a - b,
    );
    return groups.flatMap((group) => {
      const inGroup = longestFirst.filter((spec) => spec.project.config.sequence.groupOrder === group);
      const isolated = inGroup.filter((spec) => spec.project.config.isolate);
      const shared = [
        ...new Set(inGroup.filter((spec) => !spec.project.config.isolate).map((s) => s.project)),
      ].map((project) => inGroup.filter((spec) => spec.project === project));
      const stack = shared.find((specs) => specs[0]?.project.name === STACK_PROJECT) ?? [];
      const [heavier = [], ...lighter] = shared
        .filter((specs) => specs !== stack)
        .sort((a, b) => total(b) - total(a));
      const [first, ...rest] = stack;
      const beside = first ? Math.max(0, first.project.config.maxWorkers - 1) : 0;
      return [
        ...(first ? [first] : []),
        ...isolated.slice(0, beside),
        ...rest,
        ...heavier,
        ...isolated.slice(beside),
        ...lighter.flat(),
      ];
    });
  }
}
