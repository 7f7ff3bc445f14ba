import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { DynamoConfig } from '#lib/platform/config';
import { remainingMs } from '#lib/platform/deadline';

/**
 * Limits of every DynamoDB call. DynamoDB answers these small requests in milliseconds, so an attempt that
 * takes longer is abandoned and retried (the SDK's standard retries, 3 attempts in all): a DynamoDB that
 * hangs costs one call about 3.5 s before it becomes a 503, and a request never waits past its budget.
 */
export const DYNAMODB_LIMITS = { connectionTimeoutMs: 500, requestTimeoutMs: 1_000, maxAttempts: 3 } as const;

/**
 * A call refused because the request's time budget is spent. The SDK does not retry it (it is neither a
 * service nor a network error), and it is a 503 for the caller (`isTransientDynamoError`).
 */
export class DeadlineExceededError extends Error {
  override readonly name = 'DeadlineExceededError';
  constructor() {
    super("The request's time budget for DynamoDB is spent");
  }
}

/**
 * Node's HTTP handler with every attempt bounded twice: by the per-call timeout, which now really fails the
 * attempt (`throwOnRequestTimeout`; without it @smithy/node-http-handler 4 only logs a warning and waits on),
 * and by the deadline of the request being handled (lib/http/middlewares/request-budget.ts).
 */
class DeadlineHttpHandler extends NodeHttpHandler {
  override async handle(...[request, options = {}]: Parameters<NodeHttpHandler['handle']>) {
    const remaining = remainingMs();
    if (remaining === 0) throw new DeadlineExceededError();
    const requestTimeout = Math.min(DYNAMODB_LIMITS.requestTimeoutMs, remaining ?? Number.POSITIVE_INFINITY);
    try {
      return await super.handle(request, { ...options, requestTimeout });
    } catch (error) {
      // Cut short by the deadline: say so, so that the SDK stops retrying.
      if (remainingMs() === 0) throw new DeadlineExceededError();
      throw error;
    }
  }
}

/**
 * The document client every adapter receives: short per-call timeouts that fire, the SDK's standard
 * retries, and the request's deadline honoured by every attempt (see `DYNAMODB_LIMITS`).
 */
export function createDocumentClient(config: DynamoConfig): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: config.region,
    maxAttempts: DYNAMODB_LIMITS.maxAttempts,
    requestHandler: new DeadlineHttpHandler({
      connectionTimeout: DYNAMODB_LIMITS.connectionTimeoutMs,
      requestTimeout: DYNAMODB_LIMITS.requestTimeoutMs,
      // Also bounds a response whose body stalls after its headers arrived.
      socketTimeout: DYNAMODB_LIMITS.requestTimeoutMs,
      throwOnRequestTimeout: true,
    }),
    ...(config.endpoint
      ? {
          endpoint: config.endpoint,
          // The embedded DynamoDB ignores credentials; real AWS uses the default provider chain.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
