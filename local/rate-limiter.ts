import {
  DEFAULT_API_KEY_LIMITS,
  EMBED_PAGE_CLIENT_LIMIT,
  EMBED_PAGE_LIMITED_PATH,
  RATE_LIMIT_HEADERS,
  WAF_RATE_LIMIT_BOUNDS,
} from '#lib/definitions/rate-limits';
import { RATE_LIMIT_BOUNDS, type RateLimit } from '#lib/domain/api-key';
import { retryAfterSeconds } from '#lib/domain/retry-after';
import { type Env, readInteger } from '#lib/platform/config';

/**
 * The local gateway's limit for keys without their own: `API_KEY_RATE_LIMIT` (requests per second) and
 * `API_KEY_BURST_LIMIT`, each defaulting to the stack's default.
 */
export function readApiKeyLimits(env: Env, problems: string[]): RateLimit {
  const { rate, burst } = RATE_LIMIT_BOUNDS;
  return {
    rate: readInteger(env, 'API_KEY_RATE_LIMIT', DEFAULT_API_KEY_LIMITS.rate, rate.min, rate.max, problems),
    burst: readInteger(
      env,
      'API_KEY_BURST_LIMIT',
      DEFAULT_API_KEY_LIMITS.burst,
      burst.min,
      burst.max,
      problems,
    ),
  };
}

/**
 * The local gateway's limit per client address on the embed page: `EMBED_PAGE_RATE_LIMIT` requests per
 * 5 minutes, defaulting to the stack's.
 */
export function readClientLimit(env: Env, problems: string[]): ClientLimit {
  return {
    requests: readInteger(
      env,
      'EMBED_PAGE_RATE_LIMIT',
      EMBED_PAGE_CLIENT_LIMIT.requests,
      WAF_RATE_LIMIT_BOUNDS.min,
      WAF_RATE_LIMIT_BOUNDS.max,
      problems,
    ),
    windowSeconds: EMBED_PAGE_CLIENT_LIMIT.windowSeconds,
    pathSuffix: EMBED_PAGE_LIMITED_PATH,
  };
}

/** Milliseconds from a monotonic source; injected so tests move time by hand instead of sleeping. */
export type MonotonicClock = () => number;

/** The outcome of one request against its key's bucket. */
export interface RateLimitDecision {
  allowed: boolean;
  /** `RateLimit-*` headers after this request; on a refusal also `Retry-After`. */
  headers: Record<string, string>;
}

interface Bucket {
  limits: RateLimit;
  tokens: number;
  /** Clock reading at which `tokens` was last brought up to date. */
  at: number;
}

/** Float arithmetic on elapsed milliseconds may leave 0.9999… where exactly one token has refilled. */
const EPSILON = 1e-9;

/**
 * One token bucket per usage identifier, in memory: what API Gateway keeps per API key of a usage plan.
 * A bucket holds at most `burst` tokens, starts full, refills at `rate` tokens per second, and each request
 * takes one. Buckets are keyed by the usage identifier the authorizer names (derived from the key id),
 * never by the Authorization header, so the raw key is neither kept nor needed. Buckets are never
 * dropped: the local runtime serves a handful of keys.
 */
export class KeyRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    /** The limit of keys without their own (API_KEY_RATE_LIMIT, API_KEY_BURST_LIMIT). */
    private readonly defaults: RateLimit,
    private readonly now: MonotonicClock = () => performance.now(),
  ) {}

  /** Takes one request from the bucket of `usageId`, under the key's own limits or else the defaults. */
  take(usageId: string, own: RateLimit | null): RateLimitDecision {
    const limits = own ?? this.defaults;
    const now = this.now();
    let bucket = this.buckets.get(usageId);
    if (!bucket || bucket.limits.rate !== limits.rate || bucket.limits.burst !== limits.burst) {
      // A new key, or new limits: a fresh, full bucket, as a key moved to another usage plan gets in AWS.
      bucket = { limits, tokens: limits.burst, at: now };
      this.buckets.set(usageId, bucket);
    }
    bucket.tokens = Math.min(
      limits.burst,
      bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * limits.rate,
    );
    bucket.at = now;
    const allowed = bucket.tokens >= 1 - EPSILON;
    if (allowed) bucket.tokens = Math.max(0, bucket.tokens - 1);
    const headers: Record<string, string> = {
      [RATE_LIMIT_HEADERS.limit.name]: String(limits.burst),
      [RATE_LIMIT_HEADERS.remaining.name]: String(Math.floor(bucket.tokens + EPSILON)),
      [RATE_LIMIT_HEADERS.reset.name]: String(wholeSeconds((limits.burst - bucket.tokens) / limits.rate)),
    };
    if (!allowed)
      headers['Retry-After'] = String(retryAfterSeconds(((1 - bucket.tokens) / limits.rate) * 1000));
    return { allowed, headers };
  }
}

/** Seconds rounded up, never negative, ignoring float noise. */
function wholeSeconds(seconds: number): number {
  return Math.max(0, Math.ceil(seconds - EPSILON));
}

/** A limit of requests per client address over a window, as a rate-based rule of AWS WAF counts them. */
export interface ClientLimit {
  requests: number;
  windowSeconds: number;
  /** The request paths it counts: those ending with this (the rule's scope-down statement). */
  pathSuffix: string;
}

interface ClientWindow {
  /** Clock reading at which the current window began. */
  start: number;
  current: number;
  previous: number;
}

/**
 * Requests per client address over a sliding window, estimated from the counts of the current and the
 * previous fixed window (the previous one weighted by how much of it still overlaps): the approximate
 * count a rate-based rule keeps, in constant memory per address. Every request counts, refused ones too,
 * as they do in AWS WAF; an address is refused while its estimate is at the limit.
 */
export class ClientRateLimiter {
  private readonly windows = new Map<string, ClientWindow>();

  constructor(
    private readonly limit: ClientLimit,
    private readonly now: MonotonicClock = () => performance.now(),
  ) {}

  /** Whether the path is one the limit counts. */
  counts(path: string): boolean {
    return path.endsWith(this.limit.pathSuffix);
  }

  /** Counts one request of `address`; true when it may pass. */
  take(address: string): boolean {
    const windowMs = this.limit.windowSeconds * 1000;
    const now = this.now();
    let window = this.windows.get(address);
    if (!window || now - window.start >= 2 * windowMs) {
      window = { start: now, current: 0, previous: 0 };
      this.windows.set(address, window);
    } else if (now - window.start >= windowMs) {
      window.start += windowMs;
      window.previous = window.current;
      window.current = 0;
    }
    const overlap = 1 - (now - window.start) / windowMs;
    const estimate = window.previous * overlap + window.current;
    window.current += 1;
    return estimate < this.limit.requests;
  }
}
