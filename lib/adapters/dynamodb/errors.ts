import { StorageUnavailableError } from '#lib/domain/errors';
import { isTransientAwsError } from '#lib/platform/aws-clients';

/** Runs one DynamoDB call, turning transient failures into `StorageUnavailableError`. */
export async function dynamoCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isTransientAwsError(error)) throw new StorageUnavailableError({ cause: error });
    throw error;
  }
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
};

/**
 * Why DynamoDB could not be reached at all (nothing listening, no such host, no answer), or undefined
 * when the error is anything else: what a person who pointed a tool at a DynamoDB endpoint needs to hear,
 * rather than "temporarily unavailable". Follows `cause` chains (StorageUnavailableError wraps the SDK's).
 */
export function unreachableReason(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: string }).code;
    if (code && NETWORK_REASONS[code]) return NETWORK_REASONS[code];
    if (e.name === 'TimeoutError') return 'no answer in time';
    // Node's fetch-less SDK handler reports a refused connection as an AggregateError of attempts.
    if (e instanceof AggregateError) {
      for (const inner of e.errors) {
        const reason = unreachableReason(inner);
        if (reason) return reason;
      }
    }
  }
  return undefined;
}
