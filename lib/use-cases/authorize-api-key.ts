import type { KeyOwner } from '#lib/domain/api-key';
import { bearerCredential, hashCredential, isApiKeyFormat } from '#lib/domain/credentials';
import { InvalidApiKeyError } from '#lib/domain/errors';
import type { ApiKeyRepository } from '#lib/domain/ports';

/**
 * Resolves an `Authorization` header value to the owner of an active API key with one DynamoDB read.
 * Malformed headers and keys are refused without touching DynamoDB.
 */
export async function authorizeApiKey(
  deps: { apiKeys: ApiKeyRepository },
  authorization: string | undefined,
): Promise<KeyOwner> {
  const key = bearerCredential(authorization);
  if (!key || !isApiKeyFormat(key)) throw new InvalidApiKeyError('API key is missing or malformed');
  const record = await deps.apiKeys.getByHash(hashCredential(key));
  if (!record) throw new InvalidApiKeyError('API key is not known');
  if (record.status !== 'ACTIVE') throw new InvalidApiKeyError('API key is revoked');
  return { userId: record.userId, keyId: record.keyId };
}
