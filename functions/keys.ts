/**
 * The keys that sign, as the composition root makes them: the ID token signer and pairwise subjects, the
 * published key set, and the webhook secrets of the configured keys, each made on first use. KMS's client
 * and its adapters are imported then, so a function (or a request) that never signs never loads them.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import type { IdTokenSigner, PairwiseSubjects, SigningKeySet, WebhookSecrets } from '#lib/domain/ports';
import type { IdTokenKeysConfig, PublishedKeysConfig, WebhookSecretsConfig } from '#lib/platform/config';
import { onFirstUse } from '#lib/signing/on-first-use';

/** A KMS client of the region, with the limits of every AWS call. */
async function kmsClientOf(region: string): Promise<KMSClient> {
  const { kmsClient } = await import('#lib/signing/kms-client');
  return kmsClient(region);
}

/** The local runtime's key file (never on AWS). */
async function localKeys(path: string) {
  const { LocalIdTokenKeys } = await import('#lib/signing/local-keys');
  return new LocalIdTokenKeys(path);
}

/**
 * The ID token signer and pairwise subjects of the configured keys, made on first use: only a hand-off or
 * a logout needs them, so the embed page of a board without an application never loads KMS's client.
 * Throws when no keys are configured.
 */
export function idTokenPortsOf(
  config: IdTokenKeysConfig | undefined,
): () => Promise<IdTokenSigner & PairwiseSubjects> {
  return onFirstUse(async () => {
    if (!config) {
      throw new Error(
        'No ID token keys are configured (ID_TOKEN_SIGNING_KEY and ID_TOKEN_SUBJECT_KEY, or ID_TOKEN_KEY_FILE), ' +
          'yet a board names an application',
      );
    }
    if (config.kind === 'file') return localKeys(config.path);
    const { KmsIdTokenSigner } = await import('#lib/signing/kms');
    return new KmsIdTokenSigner(await kmsClientOf(config.region), config.signingKeyArn, config.subjectKeyArn);
  });
}

/** The published key set of the configured keys, made on first use. Throws when none are configured. */
export function signingKeySetOf(config: PublishedKeysConfig | undefined): () => Promise<SigningKeySet> {
  return onFirstUse(async () => {
    if (!config) {
      throw new Error('No ID token keys are configured (ID_TOKEN_PUBLISHED_KEYS, or ID_TOKEN_KEY_FILE)');
    }
    if (config.kind === 'file') return localKeys(config.path);
    const { KmsSigningKeySet } = await import('#lib/signing/kms-key-set');
    return new KmsSigningKeySet(await kmsClientOf(config.region), config.keyArns);
  });
}

/**
 * The webhook secrets of the configured master, made on first use: only creating an endpoint and
 * delivering need them.
 */
export function webhookSecretsOf(config: WebhookSecretsConfig | undefined): WebhookSecrets {
  const load = onFirstUse(async (): Promise<WebhookSecrets> => {
    if (!config) {
      throw new Error('No webhook secret key is configured (WEBHOOK_SECRET_KEY, or WEBHOOK_MASTER_KEY_FILE)');
    }
    const { KmsWebhookSecrets, LocalWebhookSecrets } = await import('#lib/signing/webhook-secrets');
    if (config.kind === 'file') return new LocalWebhookSecrets(config.path);
    return new KmsWebhookSecrets(await kmsClientOf(config.region), config.keyArn);
  });
  return { secretOf: async (endpointId, version) => (await load()).secretOf(endpointId, version) };
}
