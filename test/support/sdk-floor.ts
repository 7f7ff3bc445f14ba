import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle } from '#infra/bundling';
import { type FloorDefinition, floorBuildOptions, floorSource } from '#test/bench/floor';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The size in bytes of a function's SDK floor as the size ceiling defines it (test/bench/floor.ts): its
 * DynamoDB document client and commands, and the clients of the other services it calls, bundled with
 * the functions' options and the SDK's own modules: its entry and chunks, as a function's size counts.
 */
export async function sdkFloorBytes(name: string, definition: FloorDefinition): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'sdk-floor-'));
  try {
    const source = floorSource(name, definition, [], { otherServices: true });
    return buildBundle(floorBuildOptions(source, dir, ROOT)).bytes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
