import { KMSClient } from '@aws-sdk/client-kms';
import { DependencyUnavailableError } from '#lib/domain/errors';
import {
  type AwsCallLimits,
  awsClientSettings,
  isTransientAwsError,
  withCallPolicy,
} from '#lib/platform/aws-clients';

/**
 * A KMS client with the limits of every AWS call (lib/platform/aws-clients.ts). KMS unreachable, failing
 * or throttling once its attempts ran out is an outage the caller may retry (a 503), never a bug of ours;
 * a refusal (an unknown key, say) stays the error it is. `endpoint` and `limits` only for tests.
 */
export function kmsClient(region: string, endpoint?: string, limits?: AwsCallLimits): KMSClient {
  const client = withCallPolicy(new KMSClient(awsClientSettings({ region, endpoint }, limits)), limits);
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (isTransientAwsError(error)) throw new DependencyUnavailableError({ cause: error });
        throw error;
      }
    },
    { step: 'initialize', name: 'kmsOutageIsUnavailable' },
  );
  return client;
}
