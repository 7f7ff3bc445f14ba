import type { IdTokenSigner, PairwiseSubjects, SigningKeySet } from '#lib/domain/ports';
import type { IdTokenKeysConfig, PublishedKeysConfig } from '#lib/platform/config';
import { LocalIdTokenKeys } from './local-keys';
import { onFirstUse } from './on-first-use';

export type IdTokenPorts = IdTokenSigner & PairwiseSubjects;

/**
 * The signer and pairwise subjects of the configured keys, made on first use: only a hand-off needs them,
 * so a function that never hands off never loads the KMS client (`import()` defers its evaluation, and
 * with it the client's share of the cold start). Throws when no keys are configured.
 */
export function lazyIdTokenPorts(config: IdTokenKeysConfig | undefined): () => Promise<IdTokenPorts> {
  return onFirstUse(() => create(config));
}

async function create(config: IdTokenKeysConfig | undefined): Promise<IdTokenPorts> {
  if (!config) {
    throw new Error(
      'No ID token keys are configured (ID_TOKEN_SIGNING_KEY and ID_TOKEN_SUBJECT_KEY, or ID_TOKEN_KEY_FILE), ' +
        'yet a board names an application',
    );
  }
  if (config.kind === 'file') return new LocalIdTokenKeys(config.path);
  const [{ KmsIdTokenSigner }, { kmsClient }] = await Promise.all([import('./kms'), import('./kms-client')]);
  return new KmsIdTokenSigner(kmsClient(config.region), config.signingKeyArn, config.subjectKeyArn);
}

/** The published key set of the configured keys, made on first use. Throws when none are configured. */
export function lazySigningKeySet(config: PublishedKeysConfig | undefined): () => Promise<SigningKeySet> {
  return onFirstUse(() => createKeySet(config));
}

async function createKeySet(config: PublishedKeysConfig | undefined): Promise<SigningKeySet> {
  if (!config) {
    throw new Error('No ID token keys are configured (ID_TOKEN_PUBLISHED_KEYS, or ID_TOKEN_KEY_FILE)');
  }
  if (config.kind === 'file') return new LocalIdTokenKeys(config.path);
  const [{ KmsSigningKeySet }, { kmsClient }] = await Promise.all([
    import('./kms-key-set'),
    import('./kms-client'),
  ]);
  return new KmsSigningKeySet(kmsClient(config.region), config.keyArns);
}
