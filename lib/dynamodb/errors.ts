import { StorageUnavailableError } from '#lib/domain/errors';

/** Errors that mean "DynamoDB is unavailable or throttling right now" rather than "our request is wrong". */
const TRANSIENT_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  // The request's time budget ran out (lib/dynamodb/client.ts).
  'DeadlineExceededError',
]);

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** True when an SDK error (after its retries) is an outage or throttling, worth a 503 and a retry. */
export function isTransientDynamoError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const meta = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
  const code = (error as { code?: string }).code;
  return (
    TRANSIENT_NAMES.has(error.name) ||
    (meta?.httpStatusCode ?? 0) >= 500 ||
    (code !== undefined && NETWORK_CODES.has(code))
  );
}

/** Runs one DynamoDB call, turning transient failures into `StorageUnavailableError`. */
export async function dynamoCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isTransientDynamoError(error)) throw new StorageUnavailableError({ cause: error });
    throw error;
  }
}
