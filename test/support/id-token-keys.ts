import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoKeyringStore } from '#lib/adapters/dynamodb/keyring';
import { KeyringPublicKeys, KeyringSigner } from '#lib/adapters/signing/keyring-keys';
import { LocalKeyEncryption } from '#lib/adapters/signing/local-keys';
import { systemClock } from '#lib/platform/system';
import type { LocalRuntime } from '#local/runtime';

/**
 * The local runtime's own ID token keys, as a test holds them: its keyring (in its signing keys table),
 * opened with its key file, to sign what the embed page never sends and to read the published keys.
 */
export function runtimeIdTokenKeys(runtime: LocalRuntime) {
  const store = new DynamoKeyringStore(
    createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' }),
    runtime.tables.signingKeys,
  );
  const signer = new KeyringSigner(
    store,
    new LocalKeyEncryption(process.env.ID_TOKEN_KEY_FILE as string),
    systemClock,
  );
  const published = new KeyringPublicKeys(store, systemClock);
  return {
    sign: signer.sign.bind(signer),
    subjectOf: signer.subjectOf.bind(signer),
    tenantIdOf: signer.tenantIdOf.bind(signer),
    publicKeys: () => published.publicKeys(),
  };
}
