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

/**
 * The embed page's limit per client address, the one route that is unauthenticated and reads tables (and,
 * for a board application, signs): at most `requests` in any `windowSeconds` from one source address. On
 * AWS it is a rate-based rule of the stage's web ACL (AWS WAF counts per source IP, approximately, over its
 * evaluation window); locally the gateway counts the same. 1,000 per 5 minutes lets an office behind one
 * address open a few boards a minute per person for hundreds of people, and stops one address from
 * trying tokens or driving load at the rate the stage allows every tenant together.
 */
export const EMBED_PAGE_CLIENT_LIMIT = { requests: 1_000, windowSeconds: 300 } as const;

/** AWS WAF's bounds of a rate-based rule's limit, and the evaluation windows it offers. */
export const WAF_RATE_LIMIT_BOUNDS = { min: 10, max: 2_000_000_000 } as const;
export const WAF_EVALUATION_WINDOWS_SECONDS = [60, 120, 300, 600] as const;

/** The path (within the stage) whose requests the per-client limit counts. */
export const EMBED_PAGE_LIMITED_PATH = '/embed';

/**
 * The answer to a client over its limit, the same from WAF's custom response and the local gateway: a
 * small page, since the embed page is opened in frames and browsers, with how long to wait.
 */
export const CLIENT_LIMITED_RESPONSE = {
  status: 429,
  contentType: 'text/html; charset=utf-8',
  retryAfterSeconds: 60,
  body:
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too many requests</title></head>' +
    '<body><p>Too many requests came from your network. Please try again in a minute.</p></body></html>',
} as const;
