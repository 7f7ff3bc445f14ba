import { describe, expect, it } from 'vitest';
import { type LocalIamCredential, verifySignature } from '#local/sigv4';
import { signedRequest } from '#test/support/provisioning';

const CREDENTIAL: LocalIamCredential = {
  accessKeyId: 'AKIAEXAMPLE000000000',
  secretAccessKey: 'example-secret-access-key',
  userArn: 'arn:aws:iam::123456789012:user/backend',
};
const URL_SIGNED = new URL('http://127.0.0.1:3000/prod/admin/orgs/acme/boards/b%201?x=1');
const BODY = JSON.stringify({ visibility: 'PUBLIC' });

/** A request as the gateway receives it, signed now by the SDK signer (headers lower-cased). */
async function signed(overrides: { region?: string; secret?: string; body?: string } = {}) {
  const headers = await signedRequest(
    URL_SIGNED,
    { method: 'PUT', body: BODY, headers: { 'content-type': 'application/json' } },
    {
      accessKeyId: CREDENTIAL.accessKeyId,
      secretAccessKey: overrides.secret ?? CREDENTIAL.secretAccessKey,
      region: overrides.region ?? 'eu-west-1',
    },
  );
  const lower: Record<string, string> = { host: URL_SIGNED.host };
  for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value;
  return {
    method: 'PUT',
    path: URL_SIGNED.pathname,
    query: URL_SIGNED.searchParams,
    headers: lower,
    body: Buffer.from(overrides.body ?? BODY),
  };
}

const verify = (request: Awaited<ReturnType<typeof signed>>, now = new Date()) =>
  verifySignature(request, {
    region: 'eu-west-1',
    accountId: '123456789012',
    credentials: [CREDENTIAL],
    now,
  });

describe('the local stand-in for AWS_IAM: SigV4 verification', () => {
  it('verifies what the SDK signer signed (an encoded path, a query, a body) and names the caller', async () => {
    expect(await verify(await signed())).toEqual({
      credential: CREDENTIAL,
      caller: {
        userArn: CREDENTIAL.userArn,
        accessKey: CREDENTIAL.accessKeyId,
        caller: 'backend',
        accountId: '123456789012',
      },
    });
  });

  it('answers a request without a signature as API Gateway does: no authentication token', async () => {
    const request = await signed();
    const { authorization: _none, ...headers } = request.headers;
    expect(await verify({ ...request, headers })).toBe('MISSING_AUTHENTICATION_TOKEN');
  });

  it.each([
    ['another secret', { secret: 'wrong' }],
    ['another region', { region: 'us-east-1' }],
    ['a body changed after signing', { body: '{"visibility":"PRIVATE"}' }],
  ])('refuses a signature made with %s', async (_name, overrides) => {
    expect(await verify(await signed(overrides))).toBe('INVALID_SIGNATURE');
  });

  it('refuses a changed path or query', async () => {
    const request = await signed();
    expect(await verify({ ...request, path: '/prod/admin/orgs/other/boards/b%201' })).toBe(
      'INVALID_SIGNATURE',
    );
    expect(await verify({ ...request, query: new URLSearchParams('x=2') })).toBe('INVALID_SIGNATURE');
  });

  it('refuses an unknown access key and a malformed Authorization header', async () => {
    const request = await signed();
    const unknown =
      request.headers.authorization?.replace(CREDENTIAL.accessKeyId, 'AKIAOTHER00000000000') ?? '';
    expect(await verify({ ...request, headers: { ...request.headers, authorization: unknown } })).toBe(
      'INVALID_SIGNATURE',
    );
    expect(
      await verify({
        ...request,
        headers: { ...request.headers, authorization: 'AWS4-HMAC-SHA256 nonsense' },
      }),
    ).toBe('INVALID_SIGNATURE');
  });

  it('refuses a signature dated more than 15 minutes from now as expired, and accepts one within', async () => {
    const request = await signed();
    const at = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    expect(await verify(request, at(14))).toHaveProperty('caller');
    expect(await verify(request, at(16))).toBe('EXPIRED_TOKEN');
    expect(await verify(request, at(-16))).toBe('EXPIRED_TOKEN');
  });
});
