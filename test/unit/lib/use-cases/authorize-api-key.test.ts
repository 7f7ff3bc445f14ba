import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidApiKeyError } from '#lib/domain/errors';
import { authorizeApiKey } from '#lib/use-cases/authorize-api-key';
import { apiKeyRecord, FakeApiKeys } from '#test/support/fakes';

const KEY = `esk_${'A'.repeat(20)}-_${'z'.repeat(21)}`;
const KEY_HASH = createHash('sha256').update(KEY).digest('hex');

function repository(status: 'ACTIVE' | 'REVOKED' = 'ACTIVE') {
  return new FakeApiKeys([apiKeyRecord(KEY_HASH, { userId: 'owner-1', keyId: 'key_abc', status })]);
}

describe('authorizeApiKey', () => {
  it('returns the owner and key id of an active key, found by the SHA-256 of the key', async () => {
    const apiKeys = repository();
    await expect(authorizeApiKey({ apiKeys }, `Bearer ${KEY}`)).resolves.toEqual({
      userId: 'owner-1',
      keyId: 'key_abc',
      limits: null,
    });
    expect(apiKeys.lookups).toEqual([KEY_HASH]);
  });

  it('returns the key’s own limits with its owner, from the same single lookup', async () => {
    const apiKeys = new FakeApiKeys([
      apiKeyRecord(KEY_HASH, { keyId: 'key_abc', limits: { rate: 2, burst: 9 } }),
    ]);
    await expect(authorizeApiKey({ apiKeys }, `Bearer ${KEY}`)).resolves.toMatchObject({
      keyId: 'key_abc',
      limits: { rate: 2, burst: 9 },
    });
    expect(apiKeys.lookups).toEqual([KEY_HASH]);
  });

  it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the scheme written as %s', async (scheme) => {
    await expect(authorizeApiKey({ apiKeys: repository() }, `${scheme} ${KEY}`)).resolves.toMatchObject({
      userId: 'owner-1',
    });
  });

  it('tolerates extra spaces or a tab between the scheme and the key, and trailing spaces', async () => {
    await expect(authorizeApiKey({ apiKeys: repository() }, `Bearer \t ${KEY}  `)).resolves.toMatchObject({
      keyId: 'key_abc',
    });
  });

  it.each([
    ['a missing header', undefined],
    ['an empty header', ''],
    ['only the scheme', 'Bearer'],
    ['only the scheme and a space', 'Bearer '],
    ['the Basic scheme', `Basic ${KEY}`],
    ['a key without scheme', KEY],
    ['the scheme without a space', `Bearer${KEY}`],
    ['two keys', `Bearer ${KEY} ${KEY}`],
    ['a key without the esk_ prefix', `Bearer ${KEY.slice(4)}`],
    ['a key with a different prefix', `Bearer sk_${KEY.slice(4)}`],
    ['a key one character short', `Bearer ${KEY.slice(0, -1)}`],
    ['a key one character long', `Bearer ${KEY}A`],
    ['a key with a character outside base64url', `Bearer ${KEY.slice(0, -1)}+`],
    ['a key with padding', `Bearer ${KEY.slice(0, -1)}=`],
  ])('refuses %s with InvalidApiKeyError without reading the repository', async (_name, header) => {
    const apiKeys = repository();
    await expect(authorizeApiKey({ apiKeys }, header)).rejects.toBeInstanceOf(InvalidApiKeyError);
    expect(apiKeys.lookups).toEqual([]);
  });

  it('refuses a well-formed key that is not known', async () => {
    const apiKeys = new FakeApiKeys();
    const error = await authorizeApiKey({ apiKeys }, `Bearer ${KEY}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect(apiKeys.lookups).toEqual([KEY_HASH]);
  });

  it('refuses a revoked key', async () => {
    const error = await authorizeApiKey({ apiKeys: repository('REVOKED') }, `Bearer ${KEY}`).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect((error as Error).message).toMatch(/revoked/);
  });

  it('refuses a key whose status is anything but ACTIVE', async () => {
    const apiKeys = new FakeApiKeys([apiKeyRecord(KEY_HASH, { status: 'active' as unknown as 'ACTIVE' })]);
    await expect(authorizeApiKey({ apiKeys }, `Bearer ${KEY}`)).rejects.toBeInstanceOf(InvalidApiKeyError);
  });

  it('never puts the key in its error messages', async () => {
    const errors = await Promise.all([
      authorizeApiKey({ apiKeys: new FakeApiKeys() }, `Bearer ${KEY}`).catch((e: Error) => e),
      authorizeApiKey({ apiKeys: repository('REVOKED') }, `Bearer ${KEY}`).catch((e: Error) => e),
      authorizeApiKey({ apiKeys: repository() }, `Basic ${KEY}`).catch((e: Error) => e),
    ]);
    for (const error of errors) expect((error as Error).message).not.toContain(KEY.slice(4));
  });

  it('lets a repository failure through (the authorizer turns it into a refusal)', async () => {
    const apiKeys = repository();
    apiKeys.getByHash = async () => {
      throw new Error('DynamoDB is down');
    };
    await expect(authorizeApiKey({ apiKeys }, `Bearer ${KEY}`)).rejects.toThrow('DynamoDB is down');
  });
});
