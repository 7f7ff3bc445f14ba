/**
 * The one timeout and retry policy of every AWS call the service makes (DynamoDB, KMS, SQS, EventBridge),
 * defined here and applied to each SDK client as it is built: short per-attempt timeouts that fire, the
 * SDK's standard retries, and the deadline of the request being handled honoured by every attempt.
 */
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { remainingMs } from './deadline';

/** How long an attempt may take to connect and to be answered, and how many attempts a call makes. */
export interface AwsCallLimits {
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
  maxAttempts: number;
  /**
   * The wait before each retry, instead of the SDK's standard backoff (jittered, doubling from 100 ms,
   * or from 500 ms when throttled). Production leaves it to the SDK; a test that makes every attempt fail
   * on purpose sets a few milliseconds, since what it checks is the attempts, not the waits between them.
   */
  retryDelayMs?: number;
}

/**
 * Limits of every AWS call. The services answer the service's small requests in milliseconds, so an
 * attempt that takes longer is abandoned and retried (the SDK's standard retries, 3 attempts in all): a
 * service that hangs costs one call about 3.5 s before it becomes a 503, and a request never waits past
 * its budget (lib/adapters/http/middlewares/request-budget.ts).
 */
export const AWS_CALL_LIMITS: AwsCallLimits = {
  connectionTimeoutMs: 500,
  requestTimeoutMs: 1_000,
  maxAttempts: 3,
};

/**
 * A call refused because the request's time budget is spent. The SDK does not retry it (it is neither a
 * service nor a network error), and it is an outage for the caller (`isTransientAwsError`).
 */
export class DeadlineExceededError extends Error {
  override readonly name = 'DeadlineExceededError';
  constructor() {
    super("The request's time budget for AWS calls is spent");
  }
}

/**
 * Bounds every attempt by the deadline of the request being handled, through the client's public
 * middleware stack: added to the `finalizeRequest` step after the retry middleware, it runs once per
 * attempt. An attempt is not started once the budget is spent, and one still waiting when it runs out is
 * given up with `DeadlineExceededError`, which the SDK does not retry; its socket is closed by the
 * handler's own request timeout, at most `requestTimeoutMs` later.
 */
function requestDeadline(limits: AwsCallLimits) {
  return <Args, Output>(next: (args: Args) => Promise<Output>) =>
    async (args: Args): Promise<Output> => {
      const remaining = remainingMs();
      if (remaining === 0) throw new DeadlineExceededError();
      const attempt = next(args);
      if (remaining === undefined || remaining >= limits.requestTimeoutMs) return attempt;
      // The attempt settles later on its own (its request timeout fires); nothing is left unhandled.
      attempt.catch(() => {});
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeadlineExceededError()), remaining);
      });
      try {
        return await Promise.race([attempt, deadline]);
      } finally {
        clearTimeout(timer);
      }
    };
}

/** The name the SDK registers its logger middleware under (@aws-sdk/middleware-logger). */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

/** Where a client sends its calls: the region, and another endpoint only for a local stand-in. */
export interface AwsTarget {
  region: string;
  /** The embedded DynamoDB, or moto_server in tests: it ignores credentials, so fixed ones are given. */
  endpoint?: string | undefined;
}

/**
 * The settings every SDK client is built with: the attempts, and Node's HTTP handler with timeouts that
 * fail the attempt. Credentials come from the SDK's default provider (in the Lambda bundles, the
 * environment: infra/lambda-credentials.ts).
 */
export function awsClientSettings(target: AwsTarget, limits: AwsCallLimits = AWS_CALL_LIMITS) {
  return {
    region: target.region,
    maxAttempts: limits.maxAttempts,
    ...(limits.retryDelayMs !== undefined
      ? { retryStrategy: new ConfiguredRetryStrategy(limits.maxAttempts, limits.retryDelayMs) }
      : {}),
    requestHandler: new NodeHttpHandler({
      connectionTimeout: limits.connectionTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Also bounds a response whose body stalls after its headers arrived.
      socketTimeout: limits.requestTimeoutMs,
      // Makes the per-attempt timeout fail the attempt (without it the handler only logs a warning).
      throwOnRequestTimeout: true,
    }),
    ...(target.endpoint
      ? { endpoint: target.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  };
}

/** What of an SDK client the policy changes: its middleware stack. */
interface MiddlewareStackOwner {
  middlewareStack: {
    remove(name: string): boolean;
    add(
      middleware: ReturnType<typeof requestDeadline>,
      options: { step: 'finalizeRequest'; priority: 'low'; name: string },
    ): void;
  };
}

/**
 * Applies the rest of the policy to a client built with `awsClientSettings`: every attempt bounded by the
 * request's deadline, and no SDK logger middleware. That middleware copies every input and answer
 * through its sensitive-data filter to hand the copy to `logger.info`, even for the no-op logger: a walk
 * and copy of every item read, which no one logs (failures reach our own logger as errors).
 */
export function withCallPolicy<Client extends MiddlewareStackOwner>(
  client: Client,
  limits: AwsCallLimits = AWS_CALL_LIMITS,
): Client {
  client.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  client.middlewareStack.add(requestDeadline(limits), {
    step: 'finalizeRequest',
    priority: 'low',
    name: 'requestDeadline',
  });
  return client;
}

/** What the services answer when they are unavailable or throttling, rather than refusing the request. */
const TRANSIENT_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'RequestThrottled',
  // API Gateway's name for throttling.
  'TooManyRequestsException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  // The request's time budget ran out (above).
  'DeadlineExceededError',
]);

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * True when an SDK error (after its retries) is an outage or throttling, worth a 503 and a retry: the
 * service failed or throttled, an attempt timed out, or the connection failed.
 */
export function isTransientAwsError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const meta = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
  const code = (error as { code?: string }).code;
  return (
    TRANSIENT_NAMES.has(error.name) ||
    (meta?.httpStatusCode ?? 0) >= 500 ||
    (code !== undefined && NETWORK_CODES.has(code))
  );
}
