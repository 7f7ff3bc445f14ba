import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '#lib/domain/api-key';
import { DependencyUnavailableError, InvalidApiKeyError, StorageUnavailableError } from '#lib/domain/errors';
import { authorizeApiKey, lastUseIntervalSeconds } from '#lib/use-cases/authorize-api-key';
import { apiKeyRecord, FakeApiKeys, FakeKeyThrottling, fixedClock } from '#test/support/fakes';

const KEY = `esk_${'A'.repeat(20)}-_${'z'.repeat(21)}`;
const KEY_HASH = createHash('sha256').update(KEY).digest('hex');

const NOW = '2026-03-01T12:00:00.000Z';

/** The use case's ports: these keys, a clock at `now`, last use written once per 300 s. */
function deps(apiKeys: FakeApiKeys, now = NOW) {
  return { apiKeys, clock: fixedClock(now), lastUseIntervalSeconds: 300 };
}

function keyWith(fields: Partial<ApiKeyRecord>) {
  return new FakeApiKeys([apiKeyRecord(KEY_HASH, { keyId: 'key_abc', ...fields })]);
}

function repository(status: 'ACTIVE' | 'REVOKED' = 'ACTIVE') {
  return new FakeApiKeys([apiKeyRecord(KEY_HASH, { userId: 'owner-1', keyId: 'key_abc', status })]);
}

describe('authorizeApiKey', () => {
  it('returns the owner and key id of an active key, found by the SHA-256 of the key', async () => {
    const apiKeys = repository();
    await expect(authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`)).resolves.toEqual({
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
    await expect(authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`)).resolves.toMatchObject({
      keyId: 'key_abc',
      limits: { rate: 2, burst: 9 },
    });
    expect(apiKeys.lookups).toEqual([KEY_HASH]);
  });

  it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the scheme written as %s', async (scheme) => {
    await expect(authorizeApiKey(deps(repository()), `${scheme} ${KEY}`)).resolves.toMatchObject({
      userId: 'owner-1',
    });
  });

  it('tolerates extra spaces or a tab between the scheme and the key, and trailing spaces', async () => {
    await expect(authorizeApiKey(deps(repository()), `Bearer \t ${KEY}  `)).resolves.toMatchObject({
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
    await expect(authorizeApiKey(deps(apiKeys), header)).rejects.toBeInstanceOf(InvalidApiKeyError);
    expect(apiKeys.lookups).toEqual([]);
  });

  it('refuses a well-formed key that is not known', async () => {
    const apiKeys = new FakeApiKeys();
    const error = await authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect(apiKeys.lookups).toEqual([KEY_HASH]);
  });

  it('refuses a revoked key', async () => {
    const error = await authorizeApiKey(deps(repository('REVOKED')), `Bearer ${KEY}`).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect((error as Error).message).toMatch(/revoked/);
  });

  it('refuses a key whose status is anything but ACTIVE', async () => {
    const apiKeys = new FakeApiKeys([apiKeyRecord(KEY_HASH, { status: 'active' as unknown as 'ACTIVE' })]);
    await expect(authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`)).rejects.toBeInstanceOf(InvalidApiKeyError);
  });

  it('never puts the key in its error messages', async () => {
    const errors = await Promise.all([
      authorizeApiKey(deps(new FakeApiKeys()), `Bearer ${KEY}`).catch((e: Error) => e),
      authorizeApiKey(deps(repository('REVOKED')), `Bearer ${KEY}`).catch((e: Error) => e),
      authorizeApiKey(deps(repository()), `Basic ${KEY}`).catch((e: Error) => e),
    ]);
    for (const error of errors) expect((error as Error).message).not.toContain(KEY.slice(4));
  });

  it('lets a repository failure through (the authorizer turns it into a refusal)', async () => {
    const apiKeys = repository();
    apiKeys.getByHash = async () => {
      throw new Error('DynamoDB is down');
    };
    await expect(authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`)).rejects.toThrow('DynamoDB is down');
  });

  it('refuses a key at and after its expiry, and lets it in the moment before', async () => {
    const expiring = () => keyWith({ expiresAt: NOW });
    await expect(
      authorizeApiKey(deps(expiring(), '2026-03-01T11:59:59.999Z'), `Bearer ${KEY}`),
    ).resolves.toMatchObject({ keyId: 'key_abc' });
    for (const at of [NOW, '2027-01-01T00:00:00.000Z']) {
      const error = await authorizeApiKey(deps(expiring(), at), `Bearer ${KEY}`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidApiKeyError);
      expect((error as Error).message).toBe('API key has expired');
    }
  });

  it('records the first use of a key, at the time of the request', async () => {
    const apiKeys = keyWith({});
    await authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`);
    expect(apiKeys.uses).toEqual([{ keyHash: KEY_HASH, at: NOW }]);
    expect((await apiKeys.getByHash(KEY_HASH))?.lastUsedAt).toBe(NOW);
  });

  it('writes nothing while the recorded last use is younger than the interval', async () => {
    const apiKeys = keyWith({ lastUsedAt: '2026-03-01T11:55:00.000Z' });
    await authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`);
    expect(apiKeys.uses).toEqual([]);
  });

  it('rewrites a last use older than the interval', async () => {
    const apiKeys = keyWith({ lastUsedAt: '2026-03-01T11:54:59.999Z' });
    await authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`);
    expect((await apiKeys.getByHash(KEY_HASH))?.lastUsedAt).toBe(NOW);
  });

  it('lets a valid key in when the last-use write finds DynamoDB unavailable', async () => {
    const apiKeys = keyWith({});
    apiKeys.recordUse = async () => {
      throw new StorageUnavailableError();
    };
    await expect(authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`)).resolves.toMatchObject({
      keyId: 'key_abc',
    });
  });

  it('writes last use once per authorizer cache period, and at most once a minute without a cache', () => {
    expect(lastUseIntervalSeconds(300)).toBe(300);
    expect(lastUseIntervalSeconds(3600)).toBe(3600);
    expect(lastUseIntervalSeconds(0)).toBe(60);
  });
});

describe('authorizeApiKey after an upgrade that added usage plans', () => {
  /** The ports on AWS: the stage's usage plans, which refuse every key not registered in them. */
  function awsDeps(apiKeys: FakeApiKeys, usagePlans = new FakeKeyThrottling(), now = NOW) {
    return { ...deps(apiKeys, now), usagePlans };
  }

  it('registers a key created before usage plans existed before letting it in, and records that', async () => {
    const apiKeys = keyWith({});
    const usagePlans = new FakeKeyThrottling();
    await expect(authorizeApiKey(awsDeps(apiKeys, usagePlans), `Bearer ${KEY}`)).resolves.toMatchObject({
      keyId: 'key_abc',
    });
    expect(usagePlans.calls).toEqual(['register key_abc']);
    expect((await apiKeys.getByHash(KEY_HASH))?.usagePlanAt).toBe(NOW);
  });

  it('registers a key once: its later requests never call API Gateway', async () => {
    const apiKeys = keyWith({});
    const usagePlans = new FakeKeyThrottling();
    await authorizeApiKey(awsDeps(apiKeys, usagePlans), `Bearer ${KEY}`);
    await authorizeApiKey(awsDeps(apiKeys, usagePlans, '2026-03-01T13:00:00.000Z'), `Bearer ${KEY}`);
    expect(usagePlans.calls).toEqual(['register key_abc']);
  });

  it('leaves a key alone that is in the usage plans already (issued or synced by this version)', async () => {
    const usagePlans = new FakeKeyThrottling();
    await authorizeApiKey(
      awsDeps(keyWith({ usagePlanAt: '2026-02-01T00:00:00.000Z' }), usagePlans),
      `Bearer ${KEY}`,
    );
    expect(usagePlans.calls).toEqual([]);
  });

  it('leaves a key with limits of its own to the plan the admin CLI put it in', async () => {
    const usagePlans = new FakeKeyThrottling();
    await authorizeApiKey(awsDeps(keyWith({ limits: { rate: 2, burst: 4 } }), usagePlans), `Bearer ${KEY}`);
    expect(usagePlans.calls).toEqual([]);
  });

  it.each([
    ['revoked', { status: 'REVOKED' as const }],
    ['expired', { expiresAt: '2026-01-01T00:00:00.000Z' }],
  ])('never registers a %s key', async (_name, fields) => {
    const usagePlans = new FakeKeyThrottling();
    await expect(
      authorizeApiKey(awsDeps(keyWith(fields), usagePlans), `Bearer ${KEY}`),
    ).rejects.toBeInstanceOf(InvalidApiKeyError);
    expect(usagePlans.calls).toEqual([]);
  });

  it('fails as an outage, never as a bad key, while API Gateway cannot register it, and tries again next time', async () => {
    const apiKeys = keyWith({});
    const usagePlans = new FakeKeyThrottling();
    usagePlans.failure = new DependencyUnavailableError();
    const error = await authorizeApiKey(awsDeps(apiKeys, usagePlans), `Bearer ${KEY}`).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(error).not.toBeInstanceOf(InvalidApiKeyError);
    expect((await apiKeys.getByHash(KEY_HASH))?.usagePlanAt).toBeUndefined();

    usagePlans.failure = undefined;
    await expect(authorizeApiKey(awsDeps(apiKeys, usagePlans), `Bearer ${KEY}`)).resolves.toMatchObject({
      keyId: 'key_abc',
    });
    expect(usagePlans.calls).toEqual(['register key_abc']);
  });

  it('lets a registered key in when DynamoDB refuses to record the registration (the next use repeats it)', async () => {
    const apiKeys = keyWith({});
    apiKeys.recordUsagePlan = async () => {
      throw new StorageUnavailableError();
    };
    const usagePlans = new FakeKeyThrottling();
    await expect(authorizeApiKey(awsDeps(apiKeys, usagePlans), `Bearer ${KEY}`)).resolves.toMatchObject({
      keyId: 'key_abc',
    });
    expect(usagePlans.calls).toEqual(['register key_abc']);
  });

  it('registers nothing where no usage plans are kept (the local runtime)', async () => {
    const apiKeys = keyWith({});
    await authorizeApiKey(deps(apiKeys), `Bearer ${KEY}`);
    expect((await apiKeys.getByHash(KEY_HASH))?.usagePlanAt).toBeUndefined();
  });
});
