import type { WebhookSecrets } from '#lib/domain/ports';
import type { WebhookSecretsConfig } from '#lib/platform/config';
import { onFirstUse } from './on-first-use';

/**
 * The webhook secrets of the configured master, made on first use: only creating an endpoint and
 * delivering need them, so listing and deleting never load the KMS client (`import()` defers it).
 */
export function lazyWebhookSecrets(config: WebhookSecretsConfig | undefined): WebhookSecrets {
  const load = onFirstUse(() => create(config));
  return { secretOf: async (endpointId) => (await load()).secretOf(endpointId) };
}

async function create(config: WebhookSecretsConfig | undefined): Promise<WebhookSecrets> {
  if (!config) {
    throw new Error('No webhook secret key is configured (WEBHOOK_SECRET_KEY, or WEBHOOK_MASTER_KEY_FILE)');
  }
  const { KmsWebhookSecrets, LocalWebhookSecrets } = await import('./webhook-secrets');
  if (config.kind === 'file') return new LocalWebhookSecrets(config.path);
  const { kmsClient } = await import('./kms-client');
  return new KmsWebhookSecrets(kmsClient(config.region), config.keyArn);
}
