import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';
import { buildBundle, esbuildOptions } from '#infra/bundling';
import { FUNCTIONS } from '#lib/definitions/routes';
import { floorBuildOptions, floorSource } from './floor';
import { BENCH_FUNCTIONS, type BenchFunction, COLD_PATHS } from './scenarios';

/** One built bundle: its entry file, and its size (maps excluded). */
export interface Bundle {
  file: string;
  /** The entry and every chunk it ships: what the size ceiling counts. */
  bytes: number;
  /** The entry and the chunks it imports statically: what a cold start loads before the handler runs. */
  bytesAtStart: number;
}

export interface Bundles {
  /** Each function as the stack bundles it (infra/bundling.ts). */
  functions: Record<BenchFunction, Bundle>;
  /** The SDK floor of each function (floor.ts), its handler sending the calls of the function's cold path. */
  floors: Record<BenchFunction, Bundle>;
  /** The floor the size ceiling holds each function to: with the clients of the other services it calls. */
  sizeFloors: Record<BenchFunction, Bundle>;
}

/** Builds the functions and their floors under `outDir`, with the options the CDK stack bundles with. */
export async function buildBundles(
  root: string,
  outDir: string,
  { splitFloors = false }: { splitFloors?: boolean } = {},
): Promise<Bundles> {
  const bundle = async (options: BuildOptions): Promise<Bundle> => {
    const { files, bytes, atStart } = buildBundle({ ...options, absWorkingDir: root });
    return { file: files[0] as string, bytes, bytesAtStart: atStart.bytes };
  };
  const functions = {} as Record<BenchFunction, Bundle>;
  const floors = {} as Record<BenchFunction, Bundle>;
  const sizeFloors = {} as Record<BenchFunction, Bundle>;
  for (const fn of BENCH_FUNCTIONS) {
    // The entry as an absolute path, as the stack passes it (infra/constructs/service-function.ts).
    const entry = join(root, FUNCTIONS[fn].entry);
    functions[fn] = await bundle(esbuildOptions(entry, join(outDir, 'functions', fn)));
    const source = floorSource(fn, FUNCTIONS[fn], COLD_PATHS[fn].floorCalls);
    floors[fn] = await bundle(
      floorBuildOptions(source, join(outDir, 'floors', fn), root, { split: splitFloors }),
    );
    const sized = floorSource(fn, FUNCTIONS[fn], [], { otherServices: true });
    sizeFloors[fn] = await bundle(
      floorBuildOptions(sized, join(outDir, 'size-floors', fn), root, { split: splitFloors }),
    );
  }
  return { functions, floors, sizeFloors };
}
