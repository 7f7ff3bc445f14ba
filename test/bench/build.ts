import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { esbuildOptions } from '#infra/bundling';
import { FUNCTIONS } from '#lib/definitions/routes';
import { BENCH_FUNCTIONS, type BenchFunction, EMPTY_HANDLER_SOURCE, floorSource } from './scenarios';

/** One built bundle: its file, its minified size (the .map excluded) and the bytes each input contributes. */
export interface Bundle {
  file: string;
  bytes: number;
  /** Input path (relative to the project root) -> bytes in the output, from esbuild's metafile. */
  inputs: Record<string, number>;
}

export interface Bundles {
  functions: Record<BenchFunction, Bundle>;
  /**
   * The SDK floor of each function, the 1.00× reference: bundled with the
   * functions' settings (ESM, module first) but with the SDK's default credential provider chain, which
   * the functions' bundles no longer carry (infra/bundling.ts `alias`).
   */
  floors: Record<BenchFunction, Bundle>;
  /** The same floors bundled exactly as the functions are (the environment credential provider), for reference. */
  leanFloors: Record<BenchFunction, Bundle>;
  /** The same floors as CommonJS from the SDK's CJS build (format cjs, main first), for reference. */
  cjsFloors: Record<BenchFunction, Bundle>;
  /**
   * Each function again with the two DynamoDB packages replaced by sdk-stub.mjs: its warm cost is the
   * function's own work, without the SDK's per-request pipeline.
   */
  handlerOnly: Record<BenchFunction, Bundle>;
  empty: Bundle;
}

const SDK_STUB = join(import.meta.dirname, 'sdk-stub.mjs');
const SDK_WIRE_STUB = join(import.meta.dirname, 'sdk-wire-stub.mjs');

/**
 * Builds every bundle the benchmark measures under `outDir`. Functions and floors use
 * `esbuildOptions`, the settings the CDK stack bundles with; only `absWorkingDir` and `metafile` are
 * added, and neither changes the output.
 */
export async function buildBundles(root: string, outDir: string): Promise<Bundles> {
  const entries = join(outDir, 'entries');
  mkdirSync(entries, { recursive: true });
  const bundle = async (options: BuildOptions): Promise<Bundle> => {
    const result = await build({ ...options, absWorkingDir: root, metafile: true });
    const file = options.outfile as string;
    return { file, bytes: statSync(file).size, inputs: inputsOf(result.metafile) };
  };
  const writeEntry = (name: string, source: string): string => {
    const file = join(entries, name);
    writeFileSync(file, source);
    return file;
  };

  const functions = {} as Record<BenchFunction, Bundle>;
  const floors = {} as Record<BenchFunction, Bundle>;
  const leanFloors = {} as Record<BenchFunction, Bundle>;
  const cjsFloors = {} as Record<BenchFunction, Bundle>;
  const handlerOnly = {} as Record<BenchFunction, Bundle>;
  for (const fn of BENCH_FUNCTIONS) {
    // NodejsFunction passes the entry as an absolute path and writes index.mjs.
    const entry = join(root, FUNCTIONS[fn].entry);
    functions[fn] = await bundle(esbuildOptions(entry, join(outDir, 'functions', fn, 'index.mjs')));
    handlerOnly[fn] = await bundle({
      ...esbuildOptions(entry, join(outDir, 'handler-only', fn, 'index.mjs')),
      alias: { '@aws-sdk/client-dynamodb': SDK_WIRE_STUB, '@aws-sdk/lib-dynamodb': SDK_STUB },
    });
    const floorEntry = writeEntry(`floor-${fn}.ts`, floorSource(fn));
    floors[fn] = await bundle({
      ...esbuildOptions(floorEntry, join(outDir, 'floors', fn, 'index.mjs')),
      alias: {},
    });
    leanFloors[fn] = await bundle(esbuildOptions(floorEntry, join(outDir, 'lean-floors', fn, 'index.mjs')));
    cjsFloors[fn] = await bundle({
      ...esbuildOptions(floorEntry, join(outDir, 'floors-cjs', fn, 'index.cjs')),
      alias: {},
      format: 'cjs',
      mainFields: ['main', 'module'],
      // The createRequire banner is for ES modules; CommonJS has a real `require`.
      banner: {},
    });
  }
  const empty = await bundle(
    esbuildOptions(writeEntry('empty.ts', EMPTY_HANDLER_SOURCE), join(outDir, 'empty', 'index.mjs')),
  );
  return { functions, floors, leanFloors, cjsFloors, handlerOnly, empty };
}

function inputsOf(metafile: Metafile): Record<string, number> {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined);
  const inputs: Record<string, number> = {};
  for (const [path, input] of Object.entries(output?.inputs ?? {})) inputs[path] = input.bytesInOutput;
  return inputs;
}

/** What a bundle holds beyond its floor, grouped by package (or project file), largest first. */
export function bytesAboveFloor(fn: Bundle, floor: Bundle): { source: string; bytes: number }[] {
  const byGroup = new Map<string, number>();
  const add = (inputs: Record<string, number>, sign: number) => {
    for (const [path, bytes] of Object.entries(inputs)) {
      const group = groupOf(path);
      byGroup.set(group, (byGroup.get(group) ?? 0) + sign * bytes);
    }
  };
  add(fn.inputs, 1);
  add(floor.inputs, -1);
  return [...byGroup]
    .map(([source, bytes]) => ({ source, bytes }))
    .filter((entry) => entry.bytes !== 0)
    .sort((a, b) => b.bytes - a.bytes);
}

/** `node_modules/@scope/pkg/...` -> `@scope/pkg`; project files keep their path; generated entries merge. */
function groupOf(path: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  if (match?.[1]) return match[1];
  return path.includes('.bench/') ? '(bench entry)' : path;
}
