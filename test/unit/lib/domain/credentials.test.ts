import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_PREFIX,
  bindingHash,
  hashCredential,
  isApiKeyFormat,
  isBindingSecretFormat,
  isSessionTokenFormat,
  newApiKey,
  newBindingSecret,
  newSessionToken,
  SESSION_TOKEN_LENGTH,
  sameHash,
  sessionIdOfToken,
} from '#lib/domain/credentials';
import { cryptoRandom } from '#lib/platform/system';
import { sequenceRandom } from '#test/support/fakes';

describe('hashCredential', () => {
  it('is the lowercase hex SHA-256 of the UTF-8 text', () => {
    expect(hashCredential('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashCredential('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hashCredential('é')).toBe(createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'));
  });

  it('changes completely when one character changes', () => {
    expect(hashCredential('esk_a')).not.toBe(hashCredential('esk_b'));
  });
});

describe('newSessionToken', () => {
  it('encodes 24 random bytes as 32 base64url characters', () => {
    const random = sequenceRandom([0xfb, 0xef, 0xff]);
    const token = newSessionToken(random);
    expect(random.sizes).toEqual([24]);
    expect(token).toBe('--__'.repeat(8));
    expect(token).toHaveLength(SESSION_TOKEN_LENGTH);
    expect(SESSION_TOKEN_LENGTH).toBe(32);
  });

  it('produces distinct, well-formed tokens from crypto randomness', () => {
    const tokens = Array.from({ length: 200 }, () => newSessionToken(cryptoRandom));
    expect(new Set(tokens).size).toBe(200);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
});

describe('isSessionTokenFormat', () => {
  it('accepts 32 URL-safe characters', () => {
    expect(isSessionTokenFormat(`${'A'.repeat(30)}-_`)).toBe(true);
    expect(isSessionTokenFormat(newSessionToken(cryptoRandom))).toBe(true);
  });

  it.each([
    ['31 characters', 'a'.repeat(31)],
    ['33 characters', 'a'.repeat(33)],
    ['a "+"', `${'a'.repeat(31)}+`],
    ['a "/"', `${'a'.repeat(31)}/`],
    ['padding', `${'a'.repeat(31)}=`],
    ['a space', `${'a'.repeat(31)} `],
    ['a trailing newline', `${'a'.repeat(32)}\n`],
    ['nothing', ''],
  ])('rejects %s', (_name, value) => {
    expect(isSessionTokenFormat(value)).toBe(false);
  });
});

describe('newApiKey', () => {
  it('is the esk_ prefix and 32 random bytes (256 bits) as 43 base64url characters', () => {
    const random = sequenceRandom([0xfb, 0xef, 0xff]);
    const { apiKey } = newApiKey(random);
    expect(API_KEY_PREFIX).toBe('esk_');
    expect(random.sizes[0]).toBe(32);
    expect(apiKey).toBe(
      `esk_${Buffer.alloc(32)
        .fill(Buffer.from([0xfb, 0xef, 0xff]))
        .toString('base64url')}`,
    );
    expect(apiKey).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
  });

  it('carries at least 128 bits of randomness', () => {
    const random = sequenceRandom();
    newApiKey(random);
    expect((random.sizes[0] ?? 0) * 8).toBeGreaterThanOrEqual(128);
  });

  it('has a public key id that is not derived from the key', () => {
    const random = sequenceRandom();
    const { apiKey, keyId } = newApiKey(random);
    expect(keyId).toMatch(/^key_[0-9a-f]{24}$/);
    expect(random.sizes).toEqual([32, 12]);
    expect(apiKey).not.toContain(keyId.slice(4));
  });

  it('produces distinct keys and ids from crypto randomness, all passing the format check', () => {
    const keys = Array.from({ length: 100 }, () => newApiKey(cryptoRandom));
    expect(new Set(keys.map((k) => k.apiKey)).size).toBe(100);
    expect(new Set(keys.map((k) => k.keyId)).size).toBe(100);
    for (const { apiKey } of keys) expect(isApiKeyFormat(apiKey)).toBe(true);
  });
});

describe('isApiKeyFormat', () => {
  const key = `esk_${'a'.repeat(41)}-_`;

  it('accepts esk_ followed by 43 base64url characters', () => {
    expect(isApiKeyFormat(key)).toBe(true);
  });

  it.each([
    ['no prefix', key.slice(4)],
    ['an upper-case prefix', `ESK_${key.slice(4)}`],
    ['another prefix', `sk_${key.slice(4)}`],
    ['42 characters after the prefix', key.slice(0, -1)],
    ['44 characters after the prefix', `${key}a`],
    ['a "+"', `${key.slice(0, -1)}+`],
    ['padding', `${key.slice(0, -1)}=`],
    ['surrounding spaces', ` ${key} `],
    ['nothing', ''],
  ])('rejects %s', (_name, value) => {
    expect(isApiKeyFormat(value)).toBe(false);
  });
});

describe('binding secrets', () => {
  it('are 32 random bytes as 43 base64url characters', () => {
    const random = sequenceRandom([0xfb, 0xef, 0xff]);
    const secret = newBindingSecret(random);
    expect(random.sizes).toEqual([32]);
    expect(secret).toBe(
      Buffer.from(Array.from({ length: 32 }, (_, i) => [0xfb, 0xef, 0xff][i % 3] ?? 0)).toString('base64url'),
    );
    expect(isBindingSecretFormat(secret)).toBe(true);
  });

  it('differ every time with crypto randomness', () => {
    const secrets = Array.from({ length: 50 }, () => newBindingSecret(cryptoRandom));
    expect(new Set(secrets).size).toBe(50);
  });

  it.each([
    ['42 characters', 'a'.repeat(42)],
    ['44 characters', 'a'.repeat(44)],
    ['a "+"', `${'a'.repeat(42)}+`],
    ['a ";"', `${'a'.repeat(42)};`],
    ['nothing', ''],
  ])('refuses a cookie value of %s', (_label, value) => {
    expect(isBindingSecretFormat(value)).toBe(false);
  });

  it('are stored as the SHA-256 of the session id and the secret, never the secret', () => {
    const secret = 'S'.repeat(43);
    expect(bindingHash('session-1', secret)).toBe(hashCredential(`session-1:${secret}`));
    expect(bindingHash('session-1', secret)).not.toContain(secret);
  });
});

describe('sameHash', () => {
  const hash = 'a'.repeat(64);

  it('is true only for equal hashes', () => {
    expect(sameHash(hash, 'a'.repeat(64))).toBe(true);
    expect(sameHash(hash, `${'a'.repeat(63)}b`)).toBe(false);
  });

  it.each([
    ['missing', null],
    ['undefined', undefined],
    ['empty', ''],
    ['shorter', 'a'.repeat(63)],
  ])('is false when the other hash is %s', (_label, other) => {
    expect(sameHash(hash, other)).toBe(false);
    expect(sameHash(other, hash)).toBe(false);
  });
});

describe('sessionIdOfToken', () => {
  const token = 'AbCdEfGhIjKlMnOpQrStUvWxYz012-_9';

  it('derives the same id from the same token, a different one from another, as a UUID of version 8', () => {
    const id = sessionIdOfToken(token);
    expect(sessionIdOfToken(token)).toBe(id);
    expect(sessionIdOfToken(`${token.slice(1)}A`)).not.toBe(id);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('is not the token’s stored hash, nor holds the token', () => {
    const id = sessionIdOfToken(token);
    expect(hashCredential(token)).not.toContain(id.replaceAll('-', ''));
    expect(id).not.toContain(token.slice(0, 8));
  });
});
