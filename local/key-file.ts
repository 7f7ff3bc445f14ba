import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Per kind of key, the file made in this process's private temporary folder. */
const processKeyFiles = new Map<string, string>();

/**
 * The local runtime's stand-in for a KMS key: the file `fileName`, kept in DATA_DIR when there is one (so
 * what it signs or derives stays valid across restarts), otherwise made at start in a private temporary
 * folder of this process (removed at exit). `ensure` writes the key (0600) when the file lacks one; the
 * content is never logged.
 */
export async function localKeyFile(
  dataDir: string | undefined,
  fileName: string,
  ensure: (path: string) => Promise<unknown>,
): Promise<string> {
  let path = dataDir ? join(dataDir, fileName) : processKeyFiles.get(fileName);
  if (path === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'embed-keys-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    path = join(dir, fileName);
    processKeyFiles.set(fileName, path);
  }
  await ensure(path);
  return path;
}
