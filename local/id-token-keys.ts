import { ensureLocalKeyFile } from '#lib/adapters/signing/local-keys';
import { localKeyFile } from './key-file';

/** The key file's name in DATA_DIR. */
export const LOCAL_KEY_FILE_NAME = 'id-token-keys.json';

/**
 * The local runtime's ID token keys (the stand-in for KMS): kept in DATA_DIR when there is one, so tokens
 * verify across restarts; otherwise in a private temporary folder of this process (see `localKeyFile`).
 */
export function localIdTokenKeyFile(dataDir: string | undefined): Promise<string> {
  return localKeyFile(dataDir, LOCAL_KEY_FILE_NAME, ensureLocalKeyFile);
}
