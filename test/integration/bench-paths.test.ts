import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_FUNCTIONS } from '#test/bench/scenarios';
import { callsOf, prepareSubjects, type Subject, startOnce } from '#test/bench/subjects';
import { node24 } from '#test/support/node24';

/**
 * `npm run bench` is run by hand, so nothing else would notice a cold path that no longer answers as the
 * bench expects, or a floor that no longer sends the calls its function sends: the bench would refuse to
 * run the day someone needs it. One cold start of each subject here, on Node 24 when present (it is in CI).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const NODE = node24().path ?? process.execPath;
let out: string;
let subjects: Map<string, Subject>;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'bench-paths-'));
  subjects = new Map((await prepareSubjects(ROOT, out)).subjects.map((subject) => [subject.id, subject]));
}, 120_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the bench’s cold paths', () => {
  it.each(BENCH_FUNCTIONS)(
    '%s answers as its path expects, and its floor sends the same calls',
    async (fn) => {
      const own = await startOnce(NODE, subjects.get(`fn:${fn}`) as Subject);
      const floor = await startOnce(NODE, subjects.get(`floor:${fn}`) as Subject);
      expect(Object.keys(own.byOperation ?? {}).length).toBeGreaterThan(0);
      expect(callsOf(own)).toBe(callsOf(floor));
    },
  );
});
