import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, esbuildOptions } from '#infra/bundling';
import { mapStackTrace } from '#lib/platform/source-maps';
import { childEnv } from '#test/support/child-env';

let dir: string;
let bundle: string;
let chunks: string[];

/**
 * A source whose error is thrown on line 4, and one that throws on line 3 of a module it imports on
 * first use, bundled the way the stack bundles the functions: the second throws in a chunk.
 */
const SOURCE = `export function handler(): never {
  const detail = { why: 'fixture' };
  void detail;
  throw new Error('boom');
}
export async function lazyHandler(): Promise<never> {
  return (await import('./lazy-thrower')).lazyThrow();
}
`;
const LAZY_SOURCE = `export function lazyThrow(): never {
  const detail = { why: 'lazy fixture' };
  throw new Error(\`lazy boom \${detail.why}\`);
}
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'source-maps-'));
  writeFileSync(join(dir, 'thrower.ts'), SOURCE);
  writeFileSync(join(dir, 'lazy-thrower.ts'), LAZY_SOURCE);
  const built = buildBundle({
    ...esbuildOptions(join(dir, 'thrower.ts'), join(dir, 'out')),
    absWorkingDir: dir,
  });
  [bundle = '', ...chunks] = built.files;
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The stack as Lambda would log it: thrown in a plain Node process (vitest maps stacks by itself). */
function stackOfBundle(handler = 'handler'): string {
  const script = `import(${JSON.stringify(pathToFileURL(bundle).href)}).then(async (m) => {
    try { await m.${handler}(); } catch (error) { process.stdout.write(error.stack); }
  });`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: childEnv(),
  });
}

describe('mapStackTrace', () => {
  it('rewrites a minified bundle position to the original file and line', () => {
    const stack = stackOfBundle();
    expect(stack).toMatch(/index\.mjs:\d+:\d+/);
    const mapped = mapStackTrace(stack);
    expect(mapped).toMatch(/thrower\.ts:4:\d+/);
    expect(mapped).not.toContain('index.mjs:');
    expect(mapped.split('\n')[0]).toBe('Error: boom');
  });

  it('rewrites a position in a chunk the bundle loaded on first use, with the chunk’s own map', () => {
    expect(chunks.map((file) => file.replace(/.*[\\/]/, ''))).toEqual([
      expect.stringMatching(/^lazy-thrower-\w+\.mjs$/),
    ]);
    const stack = stackOfBundle('lazyHandler');
    expect(stack).toMatch(/chunks\/lazy-thrower-\w+\.mjs:\d+:\d+/);
    const mapped = mapStackTrace(stack);
    expect(mapped).toMatch(/lazy-thrower\.ts:3:\d+/);
    expect(mapped).not.toMatch(/\.mjs:\d+/);
    expect(mapped.split('\n')[0]).toBe('Error: lazy boom lazy fixture');
  });

  it('leaves positions in files without a source map untouched', () => {
    const stack = 'Error: x\n    at f (/nowhere/no-map.js:1:2)\n    at g (file:///nowhere/other.mjs:3:4)';
    expect(mapStackTrace(stack)).toBe(stack);
  });

  it('leaves frames that are not files (native code, node: modules) untouched', () => {
    const stack =
      'Error: x\n    at Array.map (<anonymous>)\n    at run (node:internal/process/task_queues:95:5)';
    expect(mapStackTrace(stack)).toBe(stack);
  });
});
