import type { AuthorizedKey } from '#lib/domain/api-key';
import { bearerCredential, hashCredential, isApiKeyFormat } from '#lib/domain/credentials';
import { InvalidApiKeyError, MissingApiKeyError } from '#lib/domain/errors';
import type { ApiKeyRepository } from '#lib/domain/ports';

/**
 * Resolves an `Authorization` header value to the owner of an active API key, and the key's own rate limit
 * if it has one, with one DynamoDB read. Malformed headers and keys are refused without touching DynamoDB:
 * a header without a Bearer credential as missing, anything else as an invalid key.
 */
export async function authorizeApiKey(
  deps: { apiKeys: ApiKeyRepository },
  authorization: string | undefined,
): Promise<AuthorizedKey> {
  const key = bearerCredential(authorization);
  if (!key) throw new MissingApiKeyError('No Bearer credential in the Authorization header');
  if (!isApiKeyFormat(key)) throw new InvalidApiKeyError('API key is malformed');
  const record = await deps.apiKeys.getByHash(hashCredential(key));
  if (!record) throw new InvalidApiKeyError('API key is not known');
  if (record.status !== 'ACTIVE') throw new InvalidApiKeyError('API key is revoked');
  return { userId: record.userId, keyId: record.keyId, limits: record.limits };
}
