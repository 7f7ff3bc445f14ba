/**
 * The KMS client, behind a dynamic `import()` with the one adapter a function needs (`./kms` to sign,
 * `./kms-key-set` to publish): a cold start that never hands off never evaluates any of it. Each adapter
 * has its own module because esbuild keeps every export of a dynamically imported module.
 */
import { KmsJsonClient } from './kms-json';

/** A KMS client with KMS_LIMITS; `endpoint` only for tests (moto_server, with test credentials). */
export function kmsClient(region: string, endpoint?: string): KmsJsonClient {
  return new KmsJsonClient({
    region,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } } : {}),
  });
}
