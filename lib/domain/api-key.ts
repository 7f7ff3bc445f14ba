export type ApiKeyStatus = 'ACTIVE' | 'REVOKED';

/** An API key as stored: only the SHA-256 of the key, never the key. */
export interface ApiKeyRecord {
  keyHash: string;
  keyId: string;
  userId: string;
  name: string | null;
  status: ApiKeyStatus;
  createdAt: string;
  revokedAt: string | null;
  /** This key's own rate limit, set by an operator; null: the deployment's defaults apply. */
  limits: RateLimit | null;
  /** From this instant (ISO 8601) the authorizer refuses the key; absent: it never expires. */
  expiresAt?: string;
  /**
   * When the authorizer last let the key in, recorded at most once per interval (`lastUseInterval`):
   * accurate to that interval. Absent: not used since last use was recorded.
   */
  lastUsedAt?: string;
  /**
   * When the key was put in the stage's usage plans: at its issue, by `sync-rate-limits`, or by the
   * authorizer at the key's first use after the upgrade that added usage plans. Absent on a key issued
   * before then, which the authorizer registers before letting it in (once: this records it).
   */
  usagePlanAt?: string;
  /** Who issued and who revoked the key: an IAM principal's ARN, or `cli:<user>` for the admin CLI. */
  createdBy?: string;
  revokedBy?: string;
}

/** True when the key has an expiry and `now` is at or past it. */
export function isExpiredKey(record: Pick<ApiKeyRecord, 'expiresAt'>, now: Date): boolean {
  return record.expiresAt !== undefined && now.getTime() >= Date.parse(record.expiresAt);
}

/** An expiry at creation: whole days, up to ten years. */
export const KEY_EXPIRY_DAYS_MAX = 3_650;

/** Who called: the owner of the API key that authorized the request, and that key's public id. */
export interface KeyOwner {
  userId: string;
  keyId: string;
}

/** What the authorizer learns from a valid key: its owner, and the key's own rate limit if it has one. */
export interface AuthorizedKey extends KeyOwner {
  limits: RateLimit | null;
}

/**
 * A per-key rate limit as a token bucket: `burst` requests at once, refilled at `rate` requests per
 * second. API Gateway usage plans throttle the same way.
 */
export interface RateLimit {
  rate: number;
  burst: number;
}

/**
 * Whole numbers only, and a rate of at least one request per second, so a throttled client may always
 * retry within the one second that the 429's fixed `Retry-After: 1` promises. The maxima are API Gateway's
 * default account limits per region (10,000 requests per second, a burst of 5,000): a key cannot usefully
 * go beyond them.
 */
export const RATE_LIMIT_BOUNDS: Readonly<Record<keyof RateLimit, { min: number; max: number }>> = {
  rate: { min: 1, max: 10_000 },
  burst: { min: 1, max: 5_000 },
};

/** True when `value` is a whole number within the bounds of that part of a rate limit. */
export function isRateLimitValue(part: keyof RateLimit, value: unknown): value is number {
  const { min, max } = RATE_LIMIT_BOUNDS[part];
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/**
 * The usage identifier of a key: the value of the API Gateway API key that stands for it in usage plans,
 * which the authorizer returns as `usageIdentifierKey`. Derived from the public key id, never from the
 * secret, so it is no credential (clients never send it; only the authorizer names it) and it stays the same
 * for the key's life: a cached authorizer policy stays valid when the key moves to another usage plan.
 * Issued key ids make it 34 characters; API Gateway wants at least 20.
 */
export function usageIdentifierOf(keyId: string): string {
  return `usage_${keyId}`;
}
