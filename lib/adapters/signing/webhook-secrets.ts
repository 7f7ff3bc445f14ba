/**
 * Webhook signing secrets, derived and never stored: `whsec_` + base64(HMAC-SHA256(master, endpoint id
 * and secret version)); a rotation moves the endpoint to the next version.
 * On AWS the master is a KMS HMAC key (GenerateMac), so no secret exists at rest anywhere; on the local
 * runtime it is 32 random bytes in a 0600 file (in DATA_DIR, or a private temporary folder).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GenerateMacCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { WebhookSecrets } from '#lib/domain/ports';
import { formatWebhookSecret, webhookSecretMessage } from '#lib/domain/webhook';

const MASTER_FILE_MODE = 0o600;

/** Makes the local master key file unless it exists (mode 0600; an existing file is narrowed to it). */
export async function ensureWebhookMasterKeyFile(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  try {
    const file = await open(path, 'wx', MASTER_FILE_MODE);
    try {
      await file.writeFile(`${randomBytes(32).toString('base64url')}\n`);
    } finally {
      await file.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (((await stat(path)).mode & 0o777) !== MASTER_FILE_MODE) await chmod(path, MASTER_FILE_MODE);
  }
}

/** Secrets from the local master key file, read on first use. */
export class LocalWebhookSecrets implements WebhookSecrets {
  #master: Promise<Buffer> | undefined;

  constructor(private readonly path: string) {}

  async secretOf(endpointId: string, version = 1): Promise<string> {
    this.#master ??= readFile(this.path, 'utf8').then((text) => Buffer.from(text.trim(), 'base64url'));
    this.#master.catch(() => {
      this.#master = undefined;
    });
    const master = await this.#master;
    return formatWebhookSecret(
      createHmac('sha256', master).update(webhookSecretMessage(endpointId, version)).digest(),
    );
  }
}

/** Secrets from a KMS HMAC_256 key: the master never leaves KMS. */
export class KmsWebhookSecrets implements WebhookSecrets {
  constructor(
    private readonly kms: KMSClient,
    private readonly keyArn: string,
  ) {}

  async secretOf(endpointId: string, version = 1): Promise<string> {
    const { Mac } = await this.kms.send(
      new GenerateMacCommand({
        KeyId: this.keyArn,
        MacAlgorithm: 'HMAC_SHA_256',
        Message: webhookSecretMessage(endpointId, version),
      }),
    );
    if (!Mac) throw new Error('KMS answered GenerateMac without a MAC');
    return formatWebhookSecret(Mac);
  }
}
