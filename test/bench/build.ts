import { statSync } from 'node:fs';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { esbuildOptions } from '#infra/bundling';
import { FUNCTIONS } from '#lib/definitions/routes';
import { floorBuildOptions, floorSource } from './floor';
import { BENCH_FUNCTIONS, type BenchFunction, COLD_PATHS } from './scenarios';

/** One built bundle: its file and its minified size (the .map excluded). */
export interface Bundle {
  file: string;
  bytes: number;
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
export async function buildBundles(root: string, outDir: string): Promise<Bundles> {
  const bundle = async (options: BuildOptions): Promise<Bundle> => {
    await build({ ...options, absWorkingDir: root });
    const file = options.outfile as string;
    return { file, bytes: statSync(file).size };
  };
  const functions = {} as Record<BenchFunction, Bundle>;
  const floors = {} as Record<BenchFunction, Bundle>;
  const sizeFloors = {} as Record<BenchFunction, Bundle>;
  for (const fn of BENCH_FUNCTIONS) {
    // NodejsFunction passes the entry as an absolute path and writes index.mjs.
    const entry = join(root, FUNCTIONS[fn].entry);
    functions[fn] = await bundle(esbuildOptions(entry, join(outDir, 'functions', fn, 'index.mjs')));
    const source = floorSource(fn, FUNCTIONS[fn], COLD_PATHS[fn].floorCalls);
    floors[fn] = await bundle(floorBuildOptions(source, join(outDir, 'floors', fn, 'index.mjs'), root));
    const sized = floorSource(fn, FUNCTIONS[fn], [], { otherServices: true });
    sizeFloors[fn] = await bundle(
      floorBuildOptions(sized, join(outDir, 'size-floors', fn, 'index.mjs'), root),
    );
  }
  return { functions, floors, sizeFloors };
}
