/**
 * Per-key rate limits, defined once: the defaults (the CDK stack's usage plan and the local gateway) and the
 * response headers that describe a key's limit. API documents (OpenAPI) read the headers from here.
 */
import type { RateLimit } from '#lib/domain/api-key';

/**
 * The limit of every key without its own: 50 requests per second, bursts of 100. Half the stage's
 * per-method throttle (100/s, burst 200), so no single key can take a route's whole budget.
 */
export const DEFAULT_API_KEY_LIMITS: Readonly<RateLimit> = { rate: 50, burst: 100 };

/** A response header of the API, as an API document describes it. */
export interface ResponseHeaderDefinition {
  name: string;
  description: string;
  schema: { type: 'integer'; minimum: number };
}

/**
 * The rate-limit headers, with the semantics of draft-ietf-httpapi-ratelimit-headers-06 (the last draft
 * with these three separate fields) applied to a token bucket. The local gateway sends them on every
 * response to an API-key route; API Gateway cannot (it exposes no bucket state to a response), so in AWS
 * they are absent: clients must treat them as optional.
 */
export const RATE_LIMIT_HEADERS = {
  limit: {
    name: 'RateLimit-Limit',
    description:
      "The key's burst limit: the most requests it may send at once, which is also what a full bucket holds. " +
      'The bucket refills at the key’s rate (requests per second) up to this number.',
    schema: { type: 'integer', minimum: 1 },
  },
  remaining: {
    name: 'RateLimit-Remaining',
    description: 'Requests the key may still send right now, after this one (whole requests, rounded down).',
    schema: { type: 'integer', minimum: 0 },
  },
  reset: {
    name: 'RateLimit-Reset',
    description:
      'Seconds (rounded up) until the bucket is full again, that is until RateLimit-Remaining would be back ' +
      'at RateLimit-Limit if the key sent nothing meanwhile; 0 when it is full.',
    schema: { type: 'integer', minimum: 0 },
  },
} as const satisfies Record<string, ResponseHeaderDefinition>;
