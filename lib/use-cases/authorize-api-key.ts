import type { ApiKeyRecord } from '#lib/domain/api-key';
import { type AuthorizedKey, isExpiredKey } from '#lib/domain/api-key';
import { bearerCredential, hashCredential, isApiKeyFormat } from '#lib/domain/credentials';
import { DependencyUnavailableError, InvalidApiKeyError, MissingApiKeyError } from '#lib/domain/errors';
import type { ApiKeyRepository, Clock, KeyThrottling } from '#lib/domain/ports';

/**
 * How often, at most, a key's last use is written: the authorizer's cache period (API Gateway runs the
 * authorizer once per key and period anyway), and never more than once a minute where nothing caches.
 */
export function lastUseIntervalSeconds(authorizerCacheTtlSeconds: number): number {
  return Math.max(60, authorizerCacheTtlSeconds);
}

export interface AuthorizeApiKeyDeps {
  apiKeys: ApiKeyRepository;
  clock: Clock;
  /** A key's last use is rewritten once it is this old (see `lastUseIntervalSeconds`). */
  lastUseIntervalSeconds: number;
  /**
   * The stage's usage plans (API Gateway's API keys), where they are kept: a key issued before them is
   * registered at its first use. Absent (the local runtime): nothing refuses a key outside a plan.
   */
  usagePlans?: Pick<KeyThrottling, 'register'>;
}

/**
 * Resolves an `Authorization` header value to the owner of an active, unexpired API key, and the key's
 * own rate limit if it has one, with one DynamoDB read. Malformed headers and keys are refused without
 * touching DynamoDB: a header without a Bearer credential as missing, anything else as an invalid key.
 * A key whose recorded last use is older than the interval gets it rewritten (one conditional write):
 * about one write per key and interval, whatever its traffic. A key issued before the stage had usage
 * plans is registered in them before it is let in (see `registerInUsagePlans`).
 */
export async function authorizeApiKey(
  deps: AuthorizeApiKeyDeps,
  authorization: string | undefined,
): Promise<AuthorizedKey> {
  const key = bearerCredential(authorization);
  if (!key) throw new MissingApiKeyError('No Bearer credential in the Authorization header');
  if (!isApiKeyFormat(key)) throw new InvalidApiKeyError('API key is malformed');
  const record = await deps.apiKeys.getByHash(hashCredential(key));
  if (!record) throw new InvalidApiKeyError('API key is not known');
  if (record.status !== 'ACTIVE') throw new InvalidApiKeyError('API key is revoked');
  const now = deps.clock.now();
  if (isExpiredKey(record, now)) throw new InvalidApiKeyError('API key has expired');
  await registerInUsagePlans(deps, record, now);
  const staleBefore = new Date(now.getTime() - deps.lastUseIntervalSeconds * 1000).toISOString();
  if (record.lastUsedAt === undefined || record.lastUsedAt < staleBefore) {
    try {
      await deps.apiKeys.recordUse(record.keyHash, now.toISOString(), staleBefore);
    } catch (error) {
      // Last use is information, not access: a write DynamoDB refuses now is tried again by the next
      // request, and never turns a valid key away.
      if (!(error instanceof DependencyUnavailableError)) throw error;
    }
  }
  return { userId: record.userId, keyId: record.keyId, limits: record.limits };
}

/**
 * API Gateway refuses a key that is in none of the stage's usage plans, and keys issued before the stage
 * had them are in none. Such a key (no `usagePlanAt`, no limits of its own: a key with its own limits was
 * put in its own plan by the admin CLI) is registered in the default plan here, before the authorizer's
 * Allow reaches API Gateway, so the upgrade costs the key nothing. Registering is idempotent, so two
 * first requests at once do no harm, and once it is recorded on the key no request calls API Gateway
 * again: at most a few control-plane calls per key, ever. While API Gateway cannot register the key, the
 * error fails the authorizer (503 with Retry-After, never a refusal of the key), no decision is cached,
 * and the key's next request tries again. Failing to record the registration only repeats it next time.
 */
async function registerInUsagePlans(
  deps: AuthorizeApiKeyDeps,
  record: ApiKeyRecord,
  now: Date,
): Promise<void> {
  if (!deps.usagePlans || record.usagePlanAt !== undefined || record.limits !== null) return;
  await deps.usagePlans.register(record.keyId);
  try {
    await deps.apiKeys.recordUsagePlan(record.keyHash, now.toISOString());
  } catch (error) {
    if (!(error instanceof DependencyUnavailableError)) throw error;
  }
}
