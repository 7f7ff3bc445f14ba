import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureLocalKeyFile } from '#lib/signing/local-keys';

/** The key file's name in DATA_DIR. */
export const LOCAL_KEY_FILE_NAME = 'id-token-keys.json';

let processKeyFile: string | undefined;

/**
 * The local runtime's ID token keys (the stand-in for KMS): kept in DATA_DIR when there is one, so tokens
 * verify across restarts; otherwise made at start in a private temporary folder of this process (removed
 * at exit). The file is written 0600 and its content is never logged.
 */
export async function localIdTokenKeyFile(dataDir: string | undefined): Promise<string> {
  if (dataDir) {
    const path = join(dataDir, LOCAL_KEY_FILE_NAME);
    await ensureLocalKeyFile(path);
    return path;
  }
  if (!processKeyFile) {
    const dir = mkdtempSync(join(tmpdir(), 'embed-id-token-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    processKeyFile = join(dir, LOCAL_KEY_FILE_NAME);
  }
  await ensureLocalKeyFile(processKeyFile);
  return processKeyFile;
}
