import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CHILD = join(import.meta.dirname, 'child.mjs');
const MARKER = '@@BENCH@@';

/** What one cold start reports (child.mjs). */
export interface ColdSample {
  /** From just before importing the bundle to the first handler result. */
  ms: number;
  /** Of which, importing the bundle. */
  importMs: number;
  status: number | string;
  /** The DynamoDB calls it made, by operation. */
  byOperation: Record<string, number>;
  /** With `warm` loads asked for: their median time, and the DynamoDB calls they made together. */
  warmMedianMs?: number;
  warmCalls?: Record<string, number>;
}

/** A failure of the benchmark itself (a crash or an unexpected result), never a missed goal. */
export class BenchBroken extends Error {
  override readonly name = 'BenchBroken';
}

/**
 * Loads `file` in a fresh process of `node` with exactly `env` and handles `event` once (child.mjs):
 * one cold start; then `warm` more times in the same process, timed apart from it.
 */
export async function coldRun(
  node: string,
  file: string,
  event: unknown,
  env: Record<string, string>,
  expectBody?: string,
  warm = 0,
): Promise<ColdSample> {
  let stdout: string;
  try {
    ({ stdout } = await run(node, [CHILD, file, JSON.stringify({ event, expectBody, warm })], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? '';
    const err = (error as { stderr?: string }).stderr ?? '';
    throw new BenchBroken(`cold start of ${file} failed: ${lastResult(out)?.error ?? err.trim()}`);
  }
  const result = lastResult(stdout);
  if (!result) throw new BenchBroken(`cold start of ${file} reported nothing`);
  return result as unknown as ColdSample;
}

function lastResult(stdout: string): ({ error?: string } & Record<string, unknown>) | undefined {
  const at = stdout.lastIndexOf(MARKER);
  return at < 0 ? undefined : JSON.parse(stdout.slice(at + MARKER.length).split('\n')[0] ?? 'null');
}

/** Linear-interpolated quantile (q in [0, 1]) of a non-empty sample. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const low = sorted[below] ?? Number.NaN;
  const high = sorted[Math.min(below + 1, sorted.length - 1)] ?? low;
  return low + (high - low) * (position - below);
}
