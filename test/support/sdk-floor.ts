import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type FloorDefinition, floorBuildOptions, floorSource } from '#test/bench/floor';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The size in bytes of a function's SDK floor as the size ceiling defines it (test/bench/floor.ts): its
 * DynamoDB document client and commands, and the clients of the other services it calls, bundled with
 * the functions' options and the SDK's own modules.
 */
export async function sdkFloorBytes(name: string, definition: FloorDefinition): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'sdk-floor-'));
  try {
    const outfile = join(dir, 'index.mjs');
    await build(floorBuildOptions(floorSource(name, definition, [], { otherServices: true }), outfile, ROOT));
    return statSync(outfile).size;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
