/**
 * The keys that sign, as the composition root makes them: the ID token signer and pairwise subjects (the
 * keyring, opened in memory), the published key set, the keyring's rotation, and the webhook secrets of
 * the configured keys, each made on first use.
 *
 * Their adapters, and KMS's client with them, are imported when first needed, with `import()`: the Lambda
 * bundles are split (infra/bundling.ts), so each import is a chunk of its own that a function reads from
 * disk and evaluates only when a request makes the key it needs. A request that never signs nor derives,
 * the embed page of a board without an application among them, loads none of them; a function that never
 * signs does not even ship them (docs/performance.md).
 */

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

// Each group of modules is imported once per execution environment, by the first factory that needs it.
// `@__PURE__` lets a bundle drop a group its function never uses, with its chunk.

/** The keyring's adapters: the signer and pairwise subjects, the published keys, the rotation. */
const keyringAdapters = /* @__PURE__ */ onFirstUse(() => import('#lib/adapters/signing/keyring-keys'));

/** KMS's client and the keyring's encryption under a KMS key. */
const kmsKeyEncryption = /* @__PURE__ */ onFirstUse(async () => {
  const [{ kmsClient }, { KmsKeyEncryption }] = await Promise.all([
    import('#lib/adapters/signing/kms-client'),
    import('#lib/adapters/signing/kms-key-encryption'),
  ]);
  return (region: string, keyArn: string) => new KmsKeyEncryption(kmsClient(region), keyArn);
});

/** The webhook secrets' adapters, and KMS's client for the KMS master. */
const webhookSecretAdapters = /* @__PURE__ */ onFirstUse(async () => {
  const [secrets, { kmsClient }] = await Promise.all([
    import('#lib/adapters/signing/webhook-secrets'),
    import('#lib/adapters/signing/kms-client'),
  ]);
  return { ...secrets, kmsClient };
});

/**
 * The keyring's table, given by the composition root (functions/wiring.ts, `keyringStore`): the DynamoDB
 * adapter is built there, as every other.
 */
export type KeyringStoreOf = (table: string, dynamo: DynamoConfig) => KeyringStore;

/** What opens the keyring: the KMS key, or locally the key file standing in for it. */
async function keyEncryptionOf(config: IdTokenKeysConfig): Promise<KeyEncryption> {
  if (config.kind === 'file') {
    // Only the local runtime opens a key file: a Lambda function never loads this module.
    const { LocalKeyEncryption } = await import('#lib/adapters/signing/local-keys');
    return new LocalKeyEncryption(config.path);
  }
  return (await kmsKeyEncryption())(config.region, config.keyArn);
}

const NO_KEYS =
  'No ID token keys are configured (ID_TOKEN_KEYRING_KEY and SIGNING_KEYS_TABLE, or ID_TOKEN_KEY_FILE)';

/**
 * The ID token signer and pairwise subjects of the keyring, made on first use: only a hand-off or a
 * logout needs them, so the embed page of a board without an application loads neither the keyring's
 * adapters nor KMS's client, and calls nothing. Throws when no keys are configured.
 */
export function idTokenPortsOf(
  config: IdTokenKeysConfig | undefined,
  keyringStoreOf: KeyringStoreOf,
): () => Promise<IdTokenSigner & PairwiseSubjects> {
  return onFirstUse(async () => {
    if (!config) throw new Error(`${NO_KEYS}, yet a board names an application`);
    const { KeyringSigner } = await keyringAdapters();
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
    const { KeyringPublicKeys } = await keyringAdapters();
    return new KeyringPublicKeys(keyringStoreOf(config.table, config.dynamo), systemClock);
  });
}

/** The keyring's rotation on `policy`'s schedule. */
export async function keyRotationOf(
  config: IdTokenKeysConfig,
  policy: RotationPolicy,
  keyringStoreOf: KeyringStoreOf,
) {
  const { KeyRotation } = await keyringAdapters();
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
    const { LocalWebhookSecrets, KmsWebhookSecrets, kmsClient } = await webhookSecretAdapters();
    if (config.kind === 'file') return new LocalWebhookSecrets(config.path);
    return new KmsWebhookSecrets(kmsClient(config.region), config.keyArn);
  });
  return { secretOf: async (endpointId, version) => (await load()).secretOf(endpointId, version) };
}
