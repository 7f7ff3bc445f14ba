import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';

/** Every JavaScript file (`.mjs`) under a bundle's folder, its chunks included, sorted. */
export function javascriptFilesIn(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.mjs'))
    .map((file) => join(dir, file))
    .sort();
}

/** A written bundle's files by how its entry reaches them. */
export interface ReachedFiles {
  /** The entry and every chunk it imports statically: what Node loads before the handler runs. */
  atStart: string[];
  /** The chunks reached only through an `import()`: loaded when that import runs, if ever. */
  onDemand: string[];
}

/**
 * How the written bundle's `entry` reaches its chunks, read from the files themselves (esbuild parses
 * them; nothing is rebuilt from source).
 */
export function reachedFiles(entry: string): ReachedFiles {
  const { metafile } = buildSync({
    entryPoints: [entry],
    absWorkingDir: resolve(entry, '..'),
    bundle: true,
    write: false,
    metafile: true,
    outdir: 'unused',
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const root = resolve(entry, '..');
  const edges = (file: string, kinds: string[]) =>
    (metafile.inputs[file]?.imports ?? [])
      .filter((edge) => !edge.external && kinds.includes(edge.kind))
      .map((edge) => edge.path);
  const closure = (kinds: string[]) => {
    const seen = [Object.keys(metafile.inputs).find((file) => resolve(root, file) === entry) ?? ''];
    for (let i = 0; i < seen.length; i++)
      for (const next of edges(seen[i] as string, kinds)) if (!seen.includes(next)) seen.push(next);
    return seen;
  };
  const atStart = closure(['import-statement']);
  const all = closure(['import-statement', 'dynamic-import']);
  return {
    atStart: atStart.map((file) => resolve(root, file)),
    onDemand: all.filter((file) => !atStart.includes(file)).map((file) => resolve(root, file)),
  };
}
