import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CHILD = join(import.meta.dirname, 'child.mjs');
const MARKER = '@@BENCH@@';

/** What one cold process reports. */
export interface ColdSample {
  ms: number;
  importMs: number;
  status: number | string;
  calls: number;
  byOperation: Record<string, number>;
}

/** What one warm process reports; times are per invocation, in ms. */
export interface WarmSample {
  iterations: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  /** The process's CPU time (all threads, so GC included) per invocation; immune to preemption. */
  cpuP50: number;
  cpuP99: number;
  callsPerRequest: number;
  byOperation: Record<string, number>;
  statuses: Record<string, number>;
}

/** What one `once` process reports: one invocation of a freshly loaded bundle. */
export interface OnceSample {
  /** Wall time of the invocation, from the handler call to its result. */
  ms: number;
  /** The process's CPU time during it (all threads: the SDK's work, garbage collection, the stub). */
  cpuMs: number;
  /**
   * Of both, the time the in-process DynamoDB stub spent answering (dynamo-stub.mjs): DynamoDB's work, done
   * on its servers in production, and in parallel across the shards a revoke-all reads.
   */
  stubMs: number;
  /** The CPU time of the same (what `cpuMs` holds of the stub's work). */
  stubCpuMs: number;
  importMs: number;
  status: number | string;
  body: string | undefined;
  calls: number;
  byOperation: Record<string, number>;
}

/** A failure of the benchmark itself (a crash or an unexpected result), never a missed target. */
export class BenchBroken extends Error {
  override readonly name = 'BenchBroken';
}

/** Runs child.mjs in a fresh Node process with exactly `env` and returns its reported result. */
async function runChild<T>(
  mode: 'cold' | 'warm' | 'once',
  file: string,
  job: unknown,
  env: Record<string, string>,
  nodeArgs: readonly string[],
  node = process.execPath,
): Promise<T> {
  let stdout: string;
  try {
    ({ stdout } = await run(node, [...nodeArgs, CHILD, mode, file, JSON.stringify(job)], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    }));
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? '';
    const err = (error as { stderr?: string }).stderr ?? '';
    throw new BenchBroken(`${mode} run of ${file} failed: ${lastResult(out)?.error ?? err.trim()}`);
  }
  const result = lastResult(stdout);
  if (!result) throw new BenchBroken(`${mode} run of ${file} reported nothing`);
  return result as T;
}

function lastResult(stdout: string): ({ error?: string } & Record<string, unknown>) | undefined {
  const at = stdout.lastIndexOf(MARKER);
  return at < 0 ? undefined : JSON.parse(stdout.slice(at + MARKER.length).split('\n')[0] ?? 'null');
}

/**
 * Loads `file` in a fresh process of `node` and handles `event` once (see child.mjs for what is timed).
 */
export function coldRun(
  file: string,
  event: unknown,
  env: Record<string, string>,
  options: { nodeArgs?: readonly string[]; expectBody?: string | undefined; node?: string } = {},
): Promise<ColdSample> {
  return runChild<ColdSample>(
    'cold',
    file,
    { events: [event], expectBody: options.expectBody },
    env,
    options.nodeArgs ?? [],
    options.node,
  );
}

/** Invokes `file`'s handler `warmup` + `iterations` times in one process, timing each of the latter. */
export function warmRun(
  file: string,
  event: unknown,
  env: Record<string, string>,
  options: { warmup: number; iterations: number; expectBody?: string },
): Promise<WarmSample> {
  return runChild<WarmSample>('warm', file, { events: [event], ...options }, env, []);
}

/**
 * Loads `file` in a fresh process and handles `event` once with `remainingMs` before the deadline (the
 * function's timeout), timing the invocation alone.
 */
export function onceRun(
  file: string,
  event: unknown,
  env: Record<string, string>,
  remainingMs: number,
): Promise<OnceSample> {
  return runChild<OnceSample>('once', file, { events: [event], remainingMs }, env, []);
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
