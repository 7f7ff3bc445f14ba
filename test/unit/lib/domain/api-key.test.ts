import { describe, expect, it } from 'vitest';
import { isRateLimitValue, RATE_LIMIT_BOUNDS, usageIdentifierOf } from '#lib/domain/api-key';
import { newApiKey } from '#lib/domain/credentials';
import { cryptoRandom } from '#lib/platform/system';

describe('usageIdentifierOf', () => {
  it('gives every issued key an identifier API Gateway accepts as an API key value (at least 20 characters)', () => {
    for (let i = 0; i < 50; i++) {
      const id = usageIdentifierOf(newApiKey(cryptoRandom).keyId);
      expect(id).toMatch(/^usage_key_[0-9a-f]{24}$/);
      expect(id.length).toBeGreaterThanOrEqual(20);
    }
  });

  it('follows from the key id alone, so it stays the same for the key’s whole life', () => {
    expect(usageIdentifierOf('key_0123456789abcdef01234567')).toBe('usage_key_0123456789abcdef01234567');
    expect(usageIdentifierOf('key_0123456789abcdef01234567')).toBe(
      usageIdentifierOf('key_0123456789abcdef01234567'),
    );
  });

  it('never contains the secret key', () => {
    const { apiKey, keyId } = newApiKey(cryptoRandom);
    const id = usageIdentifierOf(keyId);
    expect(id).not.toContain(apiKey);
    expect(id).not.toContain(apiKey.slice(4, 20));
  });
});

describe('isRateLimitValue', () => {
  it('accepts whole numbers within the bounds', () => {
    for (const value of [1, 50, 10_000]) expect(isRateLimitValue('rate', value)).toBe(true);
    for (const value of [1, 100, 5_000]) expect(isRateLimitValue('burst', value)).toBe(true);
  });

  it.each([0, -1, 0.5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '5', null, undefined])(
    'refuses %j',
    (value) => {
      expect(isRateLimitValue('rate', value)).toBe(false);
      expect(isRateLimitValue('burst', value)).toBe(false);
    },
  );

  it('refuses a rate over 10000 and a burst over 5000, API Gateway’s default account limits', () => {
    expect(RATE_LIMIT_BOUNDS).toEqual({ rate: { min: 1, max: 10_000 }, burst: { min: 1, max: 5_000 } });
    expect(isRateLimitValue('rate', 10_001)).toBe(false);
    expect(isRateLimitValue('burst', 5_001)).toBe(false);
  });
});
