import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DependencyUnavailableError } from '#lib/domain/errors';
import type { IdTokenClaims } from '#lib/domain/id-token';
import { KmsIdTokenSigner } from '#lib/signing/kms';
import { kmsClient } from '#lib/signing/kms-client';
import { KmsSigningKeySet } from '#lib/signing/kms-key-set';
import { startFaultProxy } from '#test/support/fault-proxy';
import { type MotoServer, motoMissing, startMoto } from '#test/support/moto';

const missing = motoMissing();
if (missing) console.warn(`KMS signing tests skipped: ${missing}`);

const now = Math.floor(Date.now() / 1000);
const claims = (overrides: Partial<IdTokenClaims> = {}): IdTokenClaims => ({
  iss: 'https://embed.example.com',
  aud: 'https://board.example.com',
  sub: 's',
  tid: 't',
  user_id: 'customer-42',
  email: 'ada@example.com',
  given_name: 'Ada',
  family_name: null,
  picture: null,
  plan: null,
  metadata: {},
  board_id: 'b1',
  board_name: null,
  sid: 'ses_1',
  iat: now,
  exp: now + 300,
  session_exp: now + 3600,
  jti: 'j1',
  ...overrides,
});

describe.skipIf(missing !== undefined)('KMS signing adapter, against moto_server', () => {
  let moto: MotoServer;
  /** The service's own KMS client (lib/signing/kms-client.ts), as the embed page sends. */
  let kms: KMSClient;
  /** The SDK's client, only to create the test's keys. */
  let admin: KMSClient;
  const arns: { signing: string; next: string; subject: string; otherSubject: string } = {
    signing: '',
    next: '',
    subject: '',
    otherSubject: '',
  };

  async function createKey(spec: 'ECC_NIST_P256' | 'HMAC_256'): Promise<string> {
    const { KeyMetadata } = await admin.send(
      new CreateKeyCommand({
        KeySpec: spec,
        KeyUsage: spec === 'HMAC_256' ? 'GENERATE_VERIFY_MAC' : 'SIGN_VERIFY',
      }),
    );
    return KeyMetadata?.Arn as string;
  }

  beforeAll(async () => {
    moto = await startMoto();
    kms = kmsClient('eu-west-1', moto.endpoint);
    admin = new KMSClient({
      region: 'eu-west-1',
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    arns.signing = await createKey('ECC_NIST_P256');
    arns.next = await createKey('ECC_NIST_P256');
    arns.subject = await createKey('HMAC_256');
    arns.otherSubject = await createKey('HMAC_256');
  }, 30_000);
  afterAll(async () => {
    admin?.destroy();
    await moto?.close();
  });

  it('signs an ES256 JWT (DER turned into r‖s) that jose verifies against the JWKS KMS’s public key makes', async () => {
    const token = await new KmsIdTokenSigner(kms, arns.signing, arns.subject).sign(claims());
    const keyId = arns.signing.split('/').at(-1);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', typ: 'JWT', kid: keyId });
    const keys = await new KmsSigningKeySet(kms, [arns.signing]).publicKeys();
    expect(keys).toEqual([
      expect.objectContaining({ kty: 'EC', crv: 'P-256', kid: keyId, alg: 'ES256', use: 'sig' }),
    ]);
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys }), {
      issuer: 'https://embed.example.com',
      audience: 'https://board.example.com',
      algorithms: ['ES256'],
    });
    expect(payload).toEqual(claims());
  });

  it('verifies every signature, whatever the length of r and s in DER', async () => {
    const signer = new KmsIdTokenSigner(kms, arns.signing, arns.subject);
    const keys = createLocalJWKSet({ keys: await new KmsSigningKeySet(kms, [arns.signing]).publicKeys() });
    // About one DER integer in 128 is shorter than 32 bytes, one in two has a padding zero: 40 tokens meet both.
    for (let i = 0; i < 40; i++) {
      await expect(jwtVerify(await signer.sign(claims({ jti: `j${i}` })), keys)).resolves.toBeDefined();
    }
  });

  it('publishes the next key beside the current one during a rotation, each under its own kid', async () => {
    const keys = await new KmsSigningKeySet(kms, [arns.signing, arns.next]).publicKeys();
    expect(keys.map((key) => key.kid)).toEqual([arns.signing, arns.next].map((arn) => arn.split('/').at(-1)));
    expect(keys[0]?.x).not.toBe(keys[1]?.x);
    const byNext = await new KmsIdTokenSigner(kms, arns.next, arns.subject).sign(claims());
    await expect(jwtVerify(byNext, createLocalJWKSet({ keys }))).resolves.toBeDefined();
  });

  it('refuses a token signed by a key the JWKS does not list', async () => {
    const keys = await new KmsSigningKeySet(kms, [arns.signing]).publicKeys();
    const byNext = await new KmsIdTokenSigner(kms, arns.next, arns.subject).sign(claims());
    await expect(jwtVerify(byNext, createLocalJWKSet({ keys }))).rejects.toThrow();
  });

  it('derives pairwise subjects with the HMAC key: stable, distinct across tenants and stages', async () => {
    const signer = new KmsIdTokenSigner(kms, arns.signing, arns.subject);
    const orgA = { kind: 'organization', id: 'org_a' } as const;
    const subject = await signer.subjectOf(orgA, 'customer-42');
    expect(await signer.subjectOf(orgA, 'customer-42')).toBe(subject);
    expect(await signer.subjectOf({ kind: 'organization', id: 'org_b' }, 'customer-42')).not.toBe(subject);
    expect(await signer.subjectOf({ kind: 'keyOwner', id: 'org_a' }, 'customer-42')).not.toBe(subject);
    expect(subject).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const otherStage = new KmsIdTokenSigner(kms, arns.signing, arns.otherSubject);
    expect(await otherStage.subjectOf(orgA, 'customer-42')).not.toBe(subject);
  });

  it('derives the tenant id with the same HMAC key: stable, per tenant, never a subject', async () => {
    const signer = new KmsIdTokenSigner(kms, arns.signing, arns.subject);
    const orgA = { kind: 'organization', id: 'org_a' } as const;
    const tid = await signer.tenantIdOf(orgA);
    expect(await signer.tenantIdOf(orgA)).toBe(tid);
    expect(tid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await signer.tenantIdOf({ kind: 'keyOwner', id: 'org_a' })).not.toBe(tid);
    expect(await signer.subjectOf(orgA, 'customer-42')).not.toBe(tid);
  });

  it('reports what KMS refused by its error code, at once, without trying again', async () => {
    const missingKey = arns.signing.replace(/[^/]+$/, '00000000-0000-0000-0000-000000000000');
    // Through a proxy that records every request reaching KMS, retries included.
    const proxy = await startFaultProxy(moto.endpoint);
    try {
      const signer = new KmsIdTokenSigner(kmsClient('eu-west-1', proxy.endpoint), missingKey, arns.subject);
      const refused = signer.sign(claims());
      await expect(refused).rejects.toMatchObject({
        name: 'NotFoundException',
        $metadata: { httpStatusCode: 400 },
      });
      await expect(refused).rejects.not.toBeInstanceOf(DependencyUnavailableError);
      // A refusal is final: one Sign request, no second attempt.
      expect(proxy.requests.filter((request) => request.operation === 'Sign')).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('answers KMS failing after its attempts as the outage it is (a 503), having tried three times', async () => {
    const proxy = await startFaultProxy(moto.endpoint);
    try {
      await proxy.inject({ kind: 'internal-error' });
      const signer = new KmsIdTokenSigner(kmsClient('eu-west-1', proxy.endpoint), arns.signing, arns.subject);
      const failed = signer.sign(claims());
      await expect(failed).rejects.toBeInstanceOf(DependencyUnavailableError);
      await expect(failed).rejects.toMatchObject({ cause: { $metadata: { httpStatusCode: 500 } } });
      expect(proxy.requests.filter((request) => request.operation === 'Sign')).toHaveLength(3);
    } finally {
      await proxy.close();
    }
  });

  it('gives up an attempt KMS never answers at its timeout, and the call as an outage', async () => {
    const proxy = await startFaultProxy(moto.endpoint);
    try {
      await proxy.inject({ kind: 'hang' });
      const limits = { connectionTimeoutMs: 50, requestTimeoutMs: 100, maxAttempts: 2 };
      const keys = new KmsSigningKeySet(kmsClient('eu-west-1', proxy.endpoint, limits), [arns.signing]);
      await expect(keys.publicKeys()).rejects.toMatchObject({
        name: 'DependencyUnavailableError',
        cause: { name: 'TimeoutError' },
      });
      expect(proxy.requests.filter((request) => request.operation === 'GetPublicKey')).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });
});
