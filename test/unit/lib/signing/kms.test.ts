import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import {
  GenerateMacCommand,
  type GenerateMacCommandInput,
  KMSClient,
  SignCommand,
} from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { type IdTokenClaims, jwtSigningInput } from '#lib/domain/id-token';
import type { Tenant } from '#lib/domain/tenant';
import { derToJoseSignature, KmsIdTokenSigner, kmsKeyId } from '#lib/signing/kms';
import { tenantIdMessage, tenantSubjectMessage } from '#lib/signing/subject';

const ARN = 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555';

describe('derToJoseSignature', () => {
  it('turns every DER signature Node makes into the raw r‖s Node makes for the same signature', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (let i = 0; i < 300; i++) {
      const message = Buffer.from(`message ${i}`);
      const der = sign('sha256', message, { key: privateKey, dsaEncoding: 'der' });
      const raw = derToJoseSignature(der);
      expect(raw).toHaveLength(64);
      // Same (r, s): the raw form verifies as an IEEE P1363 signature.
      expect(verify('sha256', message, { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    }
  });

  it.each([
    ['not a sequence', Buffer.from([0x31, 0x00])],
    ['trailing bytes', Buffer.from([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00])],
    [
      'an integer too long',
      Buffer.concat([
        Buffer.from([0x30, 0x26, 0x02, 0x21, 0x01]),
        Buffer.alloc(32, 1),
        Buffer.from([0x02, 0x01, 0x01]),
      ]),
    ],
  ])('refuses %s', (_label, der) => {
    expect(() => derToJoseSignature(der)).toThrow();
  });
});

describe('KmsIdTokenSigner', () => {
  const now = Math.floor(Date.now() / 1000);
  const claims = (metadata: Record<string, unknown>): IdTokenClaims => ({
    iss: 'https://e.example.com',
    aud: 'https://b.example.com',
    sub: 's',
    tid: 't',
    user_id: 'u',
    email: 'u@example.com',
    given_name: null,
    family_name: null,
    picture: null,
    plan: null,
    metadata,
    board_id: 'b',
    board_name: null,
    sid: 'ses',
    iat: now,
    exp: now + 60,
    session_exp: now + 3600,
    jti: 'j',
  });

  it('names the key’s id as kid, and signs a token over 4 KB by its SHA-256 digest (MessageType DIGEST)', async () => {
    // A stand-in for KMS holding a real key: it signs the digest it is sent, as KMS does for DIGEST.
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const big = { notes: 'x'.repeat(5000) };
    const expectedInput = jwtSigningInput(kmsKeyId(ARN), claims(big));
    const kms = new KMSClient({ region: 'eu-west-1' });
    const calls = mockClient(kms)
      .onAnyCommand()
      .rejects(new Error('not sent'))
      .on(SignCommand)
      // Node cannot sign a digest it is handed; signing the input it is the digest of is the same signature.
      .resolves({
        Signature: sign('sha256', Buffer.from(expectedInput), { key: privateKey, dsaEncoding: 'der' }),
      });
    const token = await new KmsIdTokenSigner(kms, ARN, ARN).sign(claims(big));
    const signed = calls.commandCalls(SignCommand).map((call) => call.args[0].input);
    expect(signed).toHaveLength(1);
    expect(signed[0]?.MessageType).toBe('DIGEST');
    expect(Buffer.from(signed[0]?.Message ?? [])).toEqual(
      createHash('sha256').update(expectedInput).digest(),
    );
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid: kmsKeyId(ARN), alg: 'ES256' };
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: [jwk as never] }));
    expect(payload.metadata).toEqual(big);
  });

  it('derives subjects and tenant ids with GenerateMac on the subject key, over exactly the bytes every adapter hashes', async () => {
    const SUBJECT_ARN = `${ARN.slice(0, -1)}6`;
    const macs: GenerateMacCommandInput[] = [];
    const kms = new KMSClient({ region: 'eu-west-1' });
    mockClient(kms)
      .onAnyCommand()
      .rejects(new Error('not sent'))
      .on(GenerateMacCommand)
      .callsFake((input: GenerateMacCommandInput) => {
        macs.push(input);
        return {
          Mac: createHash('sha256')
            .update(input.Message ?? new Uint8Array())
            .digest(),
        };
      });
    const signer = new KmsIdTokenSigner(kms, ARN, SUBJECT_ARN);
    const org: Tenant = { kind: 'organization', id: 'org_a' };
    const owner: Tenant = { kind: 'keyOwner', id: 'owner-1' };
    const sub = await signer.subjectOf(org, 'customer-42');
    await signer.subjectOf(owner, 'customer-42');
    const tid = await signer.tenantIdOf(org);
    expect(macs.map((call) => [call.KeyId, call.MacAlgorithm])).toEqual([
      [SUBJECT_ARN, 'HMAC_SHA_256'],
      [SUBJECT_ARN, 'HMAC_SHA_256'],
      [SUBJECT_ARN, 'HMAC_SHA_256'],
    ]);
    expect(macs.map((call) => Buffer.from(call.Message ?? []).toString('utf8'))).toEqual([
      '["pairwise-sub","org_a","customer-42"]',
      '["pairwise-sub-key-owner","owner-1","customer-42"]',
      '["tenant-id","organization","org_a"]',
    ]);
    expect(Buffer.from(macs[0]?.Message ?? [])).toEqual(tenantSubjectMessage(org, 'customer-42'));
    expect(Buffer.from(macs[1]?.Message ?? [])).toEqual(tenantSubjectMessage(owner, 'customer-42'));
    expect(Buffer.from(macs[2]?.Message ?? [])).toEqual(tenantIdMessage(org));
    expect(sub).toBe(
      createHash('sha256').update('["pairwise-sub","org_a","customer-42"]').digest('base64url'),
    );
    expect(tid).toBe(createHash('sha256').update('["tenant-id","organization","org_a"]').digest('base64url'));
  });
});
