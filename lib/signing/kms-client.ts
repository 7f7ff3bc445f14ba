/**
 * What only a hand-off (or the JWKS) needs, behind one dynamic `import()`: the KMS client and its adapters.
 * A cold start that never hands off never evaluates any of it.
 */
import { KMSClient } from '@aws-sdk/client-kms';
import { NodeHttpHandler } from '@smithy/node-http-handler';

export { KmsIdTokenSigner, KmsSigningKeySet } from './kms';

/**
 * Limits of every KMS call: a signature takes KMS milliseconds, so an attempt that hangs is abandoned
 * (the SDK's standard retries, 3 attempts) and the embed page answers 500 well inside its budget.
 */
export const KMS_LIMITS = { connectionTimeoutMs: 500, requestTimeoutMs: 1_500, maxAttempts: 3 } as const;

/** A KMS client with those limits; `endpoint` only for tests (moto_server). */
export function kmsClient(region: string, endpoint?: string): KMSClient {
  return new KMSClient({
    region,
    maxAttempts: KMS_LIMITS.maxAttempts,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: KMS_LIMITS.connectionTimeoutMs,
      requestTimeout: KMS_LIMITS.requestTimeoutMs,
      socketTimeout: KMS_LIMITS.requestTimeoutMs,
      throwOnRequestTimeout: true,
    }),
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } } : {}),
  });
}
