import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureWebhookMasterKeyFile } from '#lib/signing/webhook-secrets';

/** The master key file's name in DATA_DIR. */
export const WEBHOOK_MASTER_KEY_FILE_NAME = 'webhook-master.key';

let processKeyFile: string | undefined;

/**
 * The local runtime's webhook master key (KMS's stand-in): 32 random bytes in a 0600 file, kept in
 * DATA_DIR when there is one (endpoint secrets stay valid across restarts), otherwise in a private
 * temporary folder of this process (removed at exit). Its content is never logged.
 */
export async function localWebhookMasterKeyFile(dataDir: string | undefined): Promise<string> {
  if (dataDir) {
    const path = join(dataDir, WEBHOOK_MASTER_KEY_FILE_NAME);
    await ensureWebhookMasterKeyFile(path);
    return path;
  }
  if (!processKeyFile) {
    const dir = mkdtempSync(join(tmpdir(), 'embed-webhook-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    processKeyFile = join(dir, WEBHOOK_MASTER_KEY_FILE_NAME);
  }
  await ensureWebhookMasterKeyFile(processKeyFile);
  return processKeyFile;
}
