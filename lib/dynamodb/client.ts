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
 * Bounds every attempt by the deadline of the request being handled (lib/http/middlewares/request-budget.ts),
 * through the client's public middleware stack: added to the `finalizeRequest` step after the retry
 * middleware, it runs once per attempt. An attempt is not started once the budget is spent, and one still
 * waiting when it runs out is given up with `DeadlineExceededError`, which the SDK does not retry; its
 * socket is closed by the handler's own request timeout, at most `requestTimeoutMs` later.
 */
function requestDeadline<Args, Output>(next: (args: Args) => Promise<Output>) {
  return async (args: Args): Promise<Output> => {
    const remaining = remainingMs();
    if (remaining === 0) throw new DeadlineExceededError();
    const attempt = next(args);
    if (remaining === undefined || remaining >= DYNAMODB_LIMITS.requestTimeoutMs) return attempt;
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

/**
 * A client with the limits every DynamoDB call has: short per-call timeouts that fire (through
 * `requestHandler`, which clients of one function share, so they share its sockets), the SDK's standard
 * retries, and the request's deadline honoured by every attempt (see `DYNAMODB_LIMITS`).
 */
function limitedClient(
  config: DynamoConfig,
  requestHandler: NodeHttpHandler,
  options: { cacheMiddleware: boolean },
): DynamoDBClient {
  const client = new DynamoDBClient({
    region: config.region,
    maxAttempts: DYNAMODB_LIMITS.maxAttempts,
    requestHandler,
    cacheMiddleware: options.cacheMiddleware,
    ...(config.endpoint
      ? {
          endpoint: config.endpoint,
          // The embedded DynamoDB ignores credentials; real AWS uses the default provider chain.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
  });
  // The SDK's logger middleware copies every answer through its sensitive-data filter to hand the copy to
  // `logger.info`, even for the no-op logger: a second walk and copy of every item read, which no one
  // logs. Nothing here logs SDK calls (failures reach our own logger through the error middleware).
  client.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  client.middlewareStack.add(requestDeadline, {
    step: 'finalizeRequest',
    priority: 'low',
    name: 'requestDeadline',
  });
  return client;
}

/** Documented options of Node's handler, one per function's clients. */
function limitedRequestHandler(): NodeHttpHandler {
  return new NodeHttpHandler({
    connectionTimeout: DYNAMODB_LIMITS.connectionTimeoutMs,
    requestTimeout: DYNAMODB_LIMITS.requestTimeoutMs,
    // Also bounds a response whose body stalls after its headers arrived.
    socketTimeout: DYNAMODB_LIMITS.requestTimeoutMs,
    // Makes the per-attempt timeout fail the attempt (without it @smithy/node-http-handler 4 only logs a
    // warning and waits on).
    throwOnRequestTimeout: true,
  });
}

function documentClientOf(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/** The document client every adapter receives, with the limits of every DynamoDB call. */
export function createDocumentClient(config: DynamoConfig): DynamoDBDocumentClient {
  return documentClientOf(limitedClient(config, limitedRequestHandler(), { cacheMiddleware: false }));
}

/**
 * The clients of a function that reads a scope's write shards, all at once, on every request (listing
 * and revoke-all): the document client, and a client for those queries in DynamoDB's own form that
 * resolves its middleware stack once per command class (the SDK's documented `cacheMiddleware`) instead
 * of on every call. The document client refuses that option (its commands would reuse the first one's
 * input), hence two clients on one request handler. Nothing here changes a stack after the first request,
 * the condition the option sets.
 */
export function createDynamoClients(config: DynamoConfig): {
  db: DynamoDBDocumentClient;
  shardQueries: DynamoDBClient;
} {
  const requestHandler = limitedRequestHandler();
  return {
    db: documentClientOf(limitedClient(config, requestHandler, { cacheMiddleware: false })),
    shardQueries: limitedClient(config, requestHandler, { cacheMiddleware: true }),
  };
}
