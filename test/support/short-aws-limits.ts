import type * as AwsClients from '#lib/platform/aws-clients';
import type { AwsCallLimits } from '#lib/platform/aws-clients';

/**
 * The limits of every AWS call in the tests that make DynamoDB late on purpose: the production policy's
 * shape (a timeout per attempt, three attempts) at a fraction of its time, so a test of a hanging or late
 * DynamoDB waits about a second per call instead of the 3.5 s a real caller would. The timeout stays far
 * above what dynalite needs to answer, so an answer that is not delayed on purpose is never late, even on
 * a loaded machine. Only a file that delays answers past the timeout needs them: one whose faults answer
 * at once (refused, reset, failed, lost) keeps the production limits.
 *
 * On DynamoDB Local (`npm run test:dynamodb-local`, not part of `npm test`) the attempts keep the
 * production timeouts: the Java engine's first answers after it starts can take several hundred
 * milliseconds on a busy machine. TEST_DYNAMODB is read here directly (as test/support/test-dynamo.ts
 * does) because this module is loaded inside the mock of lib/platform/aws-clients.ts, before anything
 * that imports it may be.
 */
const ON_DYNAMODB_LOCAL = process.env.TEST_DYNAMODB === 'dynamodb-local';

/** How long a retry waits in these tests: a fraction of the SDK's backoff, which waits up to seconds. */
const QUICK_RETRY_MS = 10;

export const SHORT_LIMITS: AwsCallLimits = {
  connectionTimeoutMs: ON_DYNAMODB_LOCAL ? 500 : 400,
  requestTimeoutMs: ON_DYNAMODB_LOCAL ? 1_000 : 400,
  maxAttempts: 3,
  retryDelayMs: QUICK_RETRY_MS,
};

/** An answer held back this long comes after the attempt's timeout under `SHORT_LIMITS`. */
export const LATE_MS = 2 * SHORT_LIMITS.requestTimeoutMs;

/** An answer held back this long is slow, but still within the attempt's timeout under `SHORT_LIMITS`. */
export const SLOW_MS = SHORT_LIMITS.requestTimeoutMs / 4;

/**
 * The module lib/platform/aws-clients.ts with `SHORT_LIMITS` as the default of every client built
 * without limits of its own, for `vi.mock`: the functions of the local runtime build their clients at
 * import with the default, as in Lambda, so a file of fault tests gives them the short limits this way.
 * Everything else is the module's own.
 *
 *     vi.mock('#lib/platform/aws-clients', async (original) =>
 *       (await import('#test/support/short-aws-limits')).withShortLimits(await original()));
 */
export function withShortLimits(actual: typeof AwsClients): typeof AwsClients {
  return withDefaultLimits(actual, SHORT_LIMITS);
}

/**
 * The same with the production limits and quick retries, for a file whose faults answer at once
 * (refused, reset, failed, throttled): its attempts fail without waiting a timeout, and only the SDK's
 * backoff between them (up to seconds when throttled) would be waited.
 */
export function withQuickRetries(actual: typeof AwsClients): typeof AwsClients {
  return withDefaultLimits(actual, { ...actual.AWS_CALL_LIMITS, retryDelayMs: QUICK_RETRY_MS });
}

function withDefaultLimits(actual: typeof AwsClients, limits: AwsCallLimits): typeof AwsClients {
  return {
    ...actual,
    AWS_CALL_LIMITS: limits,
    awsClientSettings: (target, own = limits) => actual.awsClientSettings(target, own),
    withCallPolicy: (client, own = limits) => actual.withCallPolicy(client, own),
  };
}
