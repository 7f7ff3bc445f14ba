import { describe, expect, it } from 'vitest';
import { allowPolicy, apiBaseUrl, keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { usageIdentifierOf } from '#lib/domain/api-key';
import { API_DOMAIN, METHOD_ARN, proxyEvent } from '#test/support/events';
import { stagePolicyDocument } from '#test/support/policies';

const OWNER = { userId: 'owner-1', keyId: 'key_0123456789abcdef01234567', limits: null };

describe('allowPolicy', () => {
  it('allows every method and path of the stage (wildcard resource) with the key owner in the context', () => {
    expect(allowPolicy(OWNER, METHOD_ARN)).toEqual({
      principalId: 'owner-1',
      policyDocument: stagePolicyDocument('Allow'),
      context: { userId: 'owner-1', keyId: 'key_0123456789abcdef01234567' },
      usageIdentifierKey: 'usage_key_0123456789abcdef01234567',
    });
  });

  it('names the key’s usage plan entry by its key id, never by anything secret', () => {
    // The API key itself never reaches allowPolicy; the identifier follows from the public key id alone.
    expect(allowPolicy(OWNER, METHOD_ARN).usageIdentifierKey).toBe(usageIdentifierOf(OWNER.keyId));
    expect(allowPolicy({ ...OWNER, keyId: 'key_other' }, METHOD_ARN).usageIdentifierKey).toBe(
      'usage_key_other',
    );
  });

  it('puts the key’s own limits in the context when it has them, and none otherwise', () => {
    const own = allowPolicy({ ...OWNER, limits: { rate: 5, burst: 12 } }, METHOD_ARN);
    expect(own.context).toEqual({
      userId: 'owner-1',
      keyId: 'key_0123456789abcdef01234567',
      rateLimit: 5,
      burstLimit: 12,
    });
    expect(allowPolicy(OWNER, METHOD_ARN).context).not.toHaveProperty('rateLimit');
  });

  it('produces the same resource whichever route triggered the authorizer, so a cached policy fits all', () => {
    const get = 'arn:aws:execute-api:us-east-1:123456789012:abc123def4/prod/GET/health';
    expect(allowPolicy(OWNER, get).policyDocument).toEqual(allowPolicy(OWNER, METHOD_ARN).policyDocument);
  });

  it.each(['', 'not-an-arn/prod/POST/x', 'arn:aws:execute-api:us-east-1:1:api'])(
    'refuses a malformed methodArn %j instead of allowing something unexpected',
    (arn) => {
      expect(() => allowPolicy(OWNER, arn)).toThrow('methodArn is malformed');
    },
  );
});

describe('apiBaseUrl', () => {
  it('builds https://{domainName}/{stage} from the request context', () => {
    expect(apiBaseUrl(proxyEvent())).toBe(`https://${API_DOMAIN}/prod`);
  });

  it('ignores the Host header, which a client can forge', () => {
    const event = proxyEvent({ headers: { Host: 'evil.example', 'X-Forwarded-Host': 'evil.example' } });
    expect(apiBaseUrl(event)).toBe(`https://${API_DOMAIN}/prod`);
  });

  it('leaves out the $default stage', () => {
    expect(apiBaseUrl(proxyEvent({ stage: '$default' }))).toBe(`https://${API_DOMAIN}`);
  });

  it('uses a custom domain name as API Gateway reports it', () => {
    expect(apiBaseUrl(proxyEvent({ domainName: 'api.example.com', stage: 'v1' }))).toBe(
      'https://api.example.com/v1',
    );
  });

  it('throws when the context has no domain name', () => {
    expect(() => apiBaseUrl(proxyEvent({ domainName: '' }))).toThrow(/PUBLIC_BASE_URL/);
  });
});

describe('keyOwnerOf', () => {
  it('reads userId and keyId from the authorizer context', () => {
    expect(keyOwnerOf(proxyEvent({ authorizer: { userId: 'u-1', keyId: 'k-1' } }))).toEqual({
      userId: 'u-1',
      keyId: 'k-1',
    });
  });

  it.each([
    ['no authorizer context', null],
    ['an empty context', {}],
    ['an empty userId', { userId: '', keyId: 'k' }],
    ['no keyId', { userId: 'u' }],
  ])('throws on %s, so a route without the authorizer never passes', (_name, authorizer) => {
    expect(() => keyOwnerOf(proxyEvent({ authorizer }))).toThrow(/Authorizer context is missing/);
  });
});
