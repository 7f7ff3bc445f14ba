/**
 * The AWS credential provider of the Lambda bundles, and only of them: infra/bundling.ts puts this module
 * in place of `@aws-sdk/credential-provider-node` (the SDK's default provider chain), so the local
 * runtime, the admin CLI and the tests keep the SDK's default behaviour (profiles, SSO and the rest).
 *
 * Lambda always hands a function its execution role's credentials in AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, and the default chain returns exactly those there: its
 * first link is this same `fromEnv`. The other links (SSO, INI files, credential processes, web
 * identity, container and instance metadata) and the STS/SSO clients they carry never run in Lambda,
 * yet they are over a third of a function's bundle and about a fifth of its cold start. Without the
 * variables, this provider fails at once with the reason, where the chain would go on to probe the
 * network.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

type Init = Parameters<typeof fromEnv>[0];
type Credentials = Awaited<ReturnType<ReturnType<typeof fromEnv>>>;

/** As the default chain: credentials that expire within 5 minutes are read again. */
const REFRESH_BEFORE_EXPIRY_MS = 300_000;

export const MISSING_CREDENTIALS_MESSAGE =
  'No AWS credentials in the environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set. ' +
  'Lambda sets them (with AWS_SESSION_TOKEN) for every function; the Lambda bundles read credentials ' +
  'from nowhere else (see infra/bundling.ts).';

/** Thrown when the environment holds no credentials; never retried, so the request fails at once. */
export class MissingLambdaCredentialsError extends Error {
  override readonly name = 'MissingLambdaCredentialsError';
}

/**
 * Drop-in for the SDK's `defaultProvider` (same signature, memoized like its chain): the environment's
 * credentials, read once and kept until they are about to expire or the SDK forces a refresh.
 */
export function defaultProvider(init: Init = {}) {
  const read = fromEnv(init);
  let cached: Credentials | undefined;
  return async (options?: { forceRefresh?: boolean }): Promise<Credentials> => {
    const expiration = cached?.expiration?.getTime();
    const stale = expiration !== undefined && expiration - Date.now() < REFRESH_BEFORE_EXPIRY_MS;
    if (cached && !stale && !options?.forceRefresh) return cached;
    try {
      cached = await read();
    } catch (error) {
      throw new MissingLambdaCredentialsError(MISSING_CREDENTIALS_MESSAGE, { cause: error });
    }
    return cached;
  };
}
