import { ensureWebhookMasterKeyFile } from '#lib/adapters/signing/webhook-secrets';
import { localKeyFile } from './key-file';

/** The master key file's name in DATA_DIR. */
export const WEBHOOK_MASTER_KEY_FILE_NAME = 'webhook-master.key';

/**
 * The local runtime's webhook master key (KMS's stand-in): 32 random bytes, kept in DATA_DIR when there is
 * one (endpoint secrets stay valid across restarts), otherwise in a private temporary folder of this
 * process (see `localKeyFile`).
 */
export function localWebhookMasterKeyFile(dataDir: string | undefined): Promise<string> {
  return localKeyFile(dataDir, WEBHOOK_MASTER_KEY_FILE_NAME, ensureWebhookMasterKeyFile);
}
