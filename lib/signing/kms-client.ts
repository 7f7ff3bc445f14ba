/**
 * What only a hand-off (or the JWKS) needs, behind one dynamic `import()`: the KMS client and its adapters.
 * A cold start that never hands off never evaluates any of it.
 */
import { KmsJsonClient } from './kms-json';

export { KmsIdTokenSigner, KmsSigningKeySet } from './kms';
export { KMS_LIMITS, KmsJsonClient } from './kms-json';

/** A KMS client with KMS_LIMITS; `endpoint` only for tests (moto_server, with test credentials). */
export function kmsClient(region: string, endpoint?: string): KmsJsonClient {
  return new KmsJsonClient({
    region,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } } : {}),
  });
}
