import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_CORE } from '#lib/adapters/http/embed/host-script';

const ROOT = join(import.meta.dirname, '../..');

/** The newest modification time of the files under `folder`. */
function newest(folder: string): number {
  return Math.max(
    ...readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs),
  );
}

/**
 * Throws unless the npm packages' dist/ folders were built from the sources as they are: `npm install`
 * (prepare) and `npm test` (pretest) build them, and tests only read them, since tests running side by
 * side must not rewrite files another one is reading. A test run straight through vitest after a change
 * says what to run.
 */
export function assertPackagesBuilt(): void {
  const stale = (why: string) =>
    new Error(`the npm packages' dist/ is stale (${why}): run npm run build:packages, or npm test`);
  let runtime: string;
  try {
    runtime = readFileSync(join(ROOT, 'embed/dist/runtime.js'), 'utf8');
  } catch {
    throw stale('embed/dist/runtime.js is missing');
  }
  if (!runtime.includes(`export const createEmbedSession = ${HOST_CORE};\n`)) {
    throw stale('embed/dist/runtime.js is not the host script of lib/adapters/http/embed/host-script.ts');
  }
  for (const name of ['embed', 'embed-react']) {
    const dist = join(ROOT, name, 'dist');
    let built: number;
    try {
      built = Math.min(...readdirSync(dist).map((file) => statSync(join(dist, file)).mtimeMs));
    } catch {
      throw stale(`${name}/dist is missing`);
    }
    if (newest(join(ROOT, name, 'src')) > built) throw stale(`${name}/src changed after its build`);
  }
}
