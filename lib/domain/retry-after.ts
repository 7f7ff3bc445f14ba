/**
 * Every `Retry-After` the service sends, whoever sends it (a handler's 409 or 503, the gateway's 429 and
 * 503, the local rate limiter): whole seconds, rounded up, and never less than one. A `0` would ask a
 * client to retry at once, which is what a refusal is there to prevent, and a fraction is not a valid
 * `Retry-After` at all.
 */
export const MIN_RETRY_AFTER_SECONDS = 1;

/** After a 503 (storage or authorization unavailable): long enough for a brief outage to pass. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** After API Gateway's 429: every key refills at least one request per second. */
export const THROTTLED_RETRY_AFTER_SECONDS = MIN_RETRY_AFTER_SECONDS;

/** Float noise below which a wait counts as whole seconds (0.1 + 0.2 seconds is not 0.30000000000000004). */
const EPSILON_SECONDS = 1e-9;

/** The `Retry-After` seconds for a wait of `waitMs` milliseconds: rounded up, at least one. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(MIN_RETRY_AFTER_SECONDS, Math.ceil(waitMs / 1000 - EPSILON_SECONDS));
}
