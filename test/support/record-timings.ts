/**
 * `npm run -s test:timings`: writes test/timings.json from Vitest's cache of the last run (its files'
 * durations), for the order a fresh clone starts its files in (test/support/sequencer.ts). Run it after
 * a whole `npm test` on a quiet machine when files were added or got much slower or faster. Files under
 * a second are left out: they start last either way.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TIMINGS_FILE } from './sequencer';

const CACHE = join(import.meta.dirname, '..', '..', 'node_modules', '.vite', 'vitest');

function latestResults(): [string, { duration?: number }][] {
  const files = readdirSync(CACHE)
    .map((dir) => join(CACHE, dir, 'results.json'))
    .filter((file) => statSync(file, { throwIfNoEntry: false }));
  const latest = files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!latest) throw new Error(`No Vitest results under ${CACHE}: run npm test first`);
  return JSON.parse(readFileSync(latest, 'utf8')).results;
}

const seconds: Record<string, number> = {};
for (const [key, result] of latestResults().sort(([a], [b]) => a.localeCompare(b))) {
  const value = Math.round((result.duration ?? 0) / 100) / 10;
  if (value >= 1) seconds[key] = value;
}
writeFileSync(TIMINGS_FILE, `${JSON.stringify({ seconds }, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files of a second or more written to ${TIMINGS_FILE}`);
