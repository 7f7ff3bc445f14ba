/**
 * The keys that sign, as the composition root makes them: the ID token signer and pairwise subjects (the
 * keyring, opened in memory), the published key set, the keyring's rotation, and the webhook secrets of
 * the configured keys, each made on first use, so a request that never signs never builds KMS's client
 * nor calls it.
 *
 * They are imported as every other module: a bundle keeps only what its function calls. A dynamic
 * `import()` would defer nothing worth having: in a one-file bundle esbuild inlines it and makes every
 * module it reaches, the AWS SDK's modules shared with DynamoDB's client included, initialize lazily, which
 * costs every function's cold start more than evaluating these modules does (docs/performance.md).
 */

import { KeyRotation, KeyringPublicKeys, KeyringSigner } from '#lib/adapters/signing/keyring-keys';
import { kmsClient } from '#lib/adapters/signing/kms-client';
import { KmsKeyEncryption } from '#lib/adapters/signing/kms-key-encryption';
import { KmsWebhookSecrets, LocalWebhookSecrets } from '#lib/adapters/signing/webhook-secrets';
import type { RotationPolicy } from '#lib/domain/keyring';
import type {
  IdTokenSigner,
  KeyEncryption,
  KeyringStore,
  PairwiseSubjects,
  SigningKeySet,
  WebhookSecrets,
} from '#lib/domain/ports';
import type {
  DynamoConfig,
  IdTokenKeysConfig,
  PublishedKeysConfig,
  WebhookSecretsConfig,
} from '#lib/platform/config';
import { onFirstUse } from '#lib/platform/on-first-use';
import { systemClock } from '#lib/platform/system';

/**
 * The keyring's table, given by the composition root (functions/wiring.ts, `keyringStore`): the DynamoDB
 * adapter is built there, as every other.
 */
export type KeyringStoreOf = (table: string, dynamo: DynamoConfig) => KeyringStore;

/** What opens the keyring: the KMS key, or locally the key file standing in for it. */
async function keyEncryptionOf(config: IdTokenKeysConfig): Promise<KeyEncryption> {
  if (config.kind === 'file') {
    // Only the local runtime opens a key file. Imported here, its module-level constant (a Buffer, which
    // esbuild cannot prove free of side effects) stays out of every bundle that never opens the keyring;
    // it reaches no SDK module, so nothing else initializes lazily for it.
    const { LocalKeyEncryption } = await import('#lib/adapters/signing/local-keys');
    return new LocalKeyEncryption(config.path);
  }
  return new KmsKeyEncryption(kmsClient(config.region), config.keyArn);
}

const NO_KEYS =
  'No ID token keys are configured (ID_TOKEN_KEYRING_KEY and SIGNING_KEYS_TABLE, or ID_TOKEN_KEY_FILE)';

/**
 * The ID token signer and pairwise subjects of the keyring, made on first use: only a hand-off or a
 * logout needs them, so the embed page of a board without an application never builds KMS's client.
 * Throws when no keys are configured.
 */
export function idTokenPortsOf(
  config: IdTokenKeysConfig | undefined,
  keyringStoreOf: KeyringStoreOf,
): () => Promise<IdTokenSigner & PairwiseSubjects> {
  return onFirstUse(async () => {
    if (!config) throw new Error(`${NO_KEYS}, yet a board names an application`);
    return new KeyringSigner(
      keyringStoreOf(config.table, config.dynamo),
      await keyEncryptionOf(config),
      systemClock,
    );
  });
}

/** The published key set of the keyring, made on first use. Throws when none is configured. */
export function signingKeySetOf(
  config: PublishedKeysConfig | undefined,
  keyringStoreOf: KeyringStoreOf,
): () => Promise<SigningKeySet> {
  return onFirstUse(async () => {
    if (!config) throw new Error('No ID token keyring is configured (SIGNING_KEYS_TABLE)');
    return new KeyringPublicKeys(keyringStoreOf(config.table, config.dynamo), systemClock);
  });
}

/** The keyring's rotation on `policy`'s schedule. */
export async function keyRotationOf(
  config: IdTokenKeysConfig,
  policy: RotationPolicy,
  keyringStoreOf: KeyringStoreOf,
) {
  return new KeyRotation(
    keyringStoreOf(config.table, config.dynamo),
    await keyEncryptionOf(config),
    systemClock,
    policy,
  );
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
    if (config.kind === 'file') return new LocalWebhookSecrets(config.path);
    return new KmsWebhookSecrets(kmsClient(config.region), config.keyArn);
  });
  return { secretOf: async (endpointId, version) => (await load()).secretOf(endpointId, version) };
}
