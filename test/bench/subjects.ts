/**
 * What the bench starts: each session function's bundle on its cold path, next to its SDK floor, with
 * the environment each runs in. Shared by `npm run bench` and the test that keeps the bench runnable.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAMBDA_SDK_ENVIRONMENT } from '#infra/bundling';
import { type Bundles, buildBundles } from './build';
import { BenchBroken, type ColdSample, coldRun } from './measure';
import { BENCH_FUNCTIONS, type BenchFunction, COLD_PATHS, lambdaEnvironment, seedTables } from './scenarios';

export interface Subject {
  id: string;
  file: string;
  event: unknown;
  env: Record<string, string>;
  expect: number | 'allow';
  expectBody?: string;
  /** Warm loads to time after the cold one, in the same process. */
  warm?: number;
}

/** Builds every function and floor into `out`, seeds the tables they read, and lists what to start. */
export async function prepareSubjects(
  root: string,
  out: string,
  functions: readonly BenchFunction[] = BENCH_FUNCTIONS,
  warmLoads: Partial<Record<BenchFunction, number>> = {},
  { splitFloors = false }: { splitFloors?: boolean } = {},
): Promise<{ bundles: Bundles; subjects: Subject[] }> {
  for (const dir of ['functions', 'floors', 'size-floors', 'home'])
    rmSync(join(out, dir), { recursive: true, force: true });
  const home = join(out, 'home');
  mkdirSync(home, { recursive: true });
  const seed = join(out, 'seed.json');
  writeFileSync(seed, JSON.stringify(await seedTables()));
  const bundles = await buildBundles(root, out, { splitFloors });
  // The floors run with Lambda's environment alone, as the 1.00× reference is defined; the functions with
  // the SDK settings the stack deploys them with too (infra/bundling.ts).
  const floorEnv = lambdaEnvironment(home, seed);
  const functionEnv = { ...floorEnv, ...LAMBDA_SDK_ENVIRONMENT };
  const subjects = functions.flatMap((fn): Subject[] => {
    const path = COLD_PATHS[fn];
    return [
      {
        id: `fn:${fn}`,
        file: bundles.functions[fn].file,
        event: path.event,
        env: functionEnv,
        expect: path.expect,
        ...(path.expectBody !== undefined ? { expectBody: path.expectBody } : {}),
        warm: warmLoads[fn] ?? 0,
      },
      { id: `floor:${fn}`, file: bundles.floors[fn].file, event: {}, env: floorEnv, expect: 200 },
    ];
  });
  return { bundles, subjects };
}

/** One cold start of a subject, refused when it does not give the answer its path expects. */
export async function startOnce(node: string, subject: Subject): Promise<ColdSample> {
  const sample = await coldRun(
    node,
    subject.file,
    subject.event,
    subject.env,
    subject.expectBody,
    subject.warm,
  );
  if (sample.status !== subject.expect) {
    throw new BenchBroken(`${subject.id} answered ${sample.status}, expected ${subject.expect}`);
  }
  return sample;
}

/** The calls of a cold start, by operation, in a stable order: a function and its floor must agree. */
export function callsOf(sample: ColdSample | undefined): string {
  return JSON.stringify(Object.entries(sample?.byOperation ?? {}).sort(([a], [b]) => a.localeCompare(b)));
}
