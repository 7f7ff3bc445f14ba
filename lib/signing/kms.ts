import { createHash } from 'node:crypto';
import { GenerateMacCommand, type KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { compactJwt, jwtSigningInput, type SignedTokenClaims } from '#lib/domain/id-token';
import type { IdTokenSigner, PairwiseSubjects } from '#lib/domain/ports';
import type { Tenant } from '#lib/domain/tenant';
import { tenantIdMessage, tenantSubjectMessage } from './subject';

/** KMS signs a message of up to 4,096 bytes as is; a longer one is signed by its SHA-256 digest. */
const KMS_RAW_MESSAGE_MAX_BYTES = 4096;

/** A KMS key's id (the last part of its ARN): the `kid` of the tokens it signs, the same in the JWKS. */
export function kmsKeyId(keyArn: string): string {
  return keyArn.slice(keyArn.lastIndexOf('/') + 1);
}

/**
 * ID tokens signed in KMS: the private key never leaves it. The signing key is an asymmetric
 * `ECC_NIST_P256` `SIGN_VERIFY` key; pairwise subjects are HMACs by a `GENERATE_VERIFY_MAC` key.
 */
export class KmsIdTokenSigner implements IdTokenSigner, PairwiseSubjects {
  constructor(
    private readonly kms: KMSClient,
    private readonly signingKeyArn: string,
    private readonly subjectKeyArn: string,
  ) {}

  async sign(claims: SignedTokenClaims): Promise<string> {
    const input = jwtSigningInput(kmsKeyId(this.signingKeyArn), claims);
    const bytes = Buffer.from(input, 'utf8');
    const raw = bytes.length <= KMS_RAW_MESSAGE_MAX_BYTES;
    const { Signature } = await this.kms.send(
      new SignCommand({
        KeyId: this.signingKeyArn,
        SigningAlgorithm: 'ECDSA_SHA_256',
        MessageType: raw ? 'RAW' : 'DIGEST',
        Message: raw ? bytes : createHash('sha256').update(bytes).digest(),
      }),
    );
    if (!Signature) throw new Error('KMS answered Sign without a signature');
    return compactJwt(input, derToJoseSignature(Signature));
  }

  subjectOf(tenant: Tenant, userId: string): Promise<string> {
    return this.mac(tenantSubjectMessage(tenant, userId));
  }

  tenantIdOf(tenant: Tenant): Promise<string> {
    return this.mac(tenantIdMessage(tenant));
  }

  private async mac(message: Buffer): Promise<string> {
    const { Mac } = await this.kms.send(
      new GenerateMacCommand({ KeyId: this.subjectKeyArn, MacAlgorithm: 'HMAC_SHA_256', Message: message }),
    );
    if (!Mac) throw new Error('KMS answered GenerateMac without a MAC');
    return Buffer.from(Mac).toString('base64url');
  }
}

/**
 * The raw `r‖s` (32 bytes each) a JWS carries, from the DER `SEQUENCE { INTEGER r, INTEGER s }` KMS
 * returns: each integer loses its sign-padding zero or is left-padded to 32 bytes.
 */
export function derToJoseSignature(der: Uint8Array, size = 32): Buffer {
  const bytes = Buffer.from(der);
  let at = 0;
  const expect = (tag: number) => {
    if (bytes[at] !== tag) throw new Error('Not a DER ECDSA signature');
    at += 1;
  };
  const length = () => {
    const first = bytes[at++] ?? 0;
    if (first < 0x80) return first;
    const octets = first & 0x7f;
    let value = 0;
    for (let i = 0; i < octets; i++) value = (value << 8) | (bytes[at++] ?? 0);
    return value;
  };
  expect(0x30);
  const sequenceEnd = length() + at;
  const integer = () => {
    expect(0x02);
    const end = length() + at;
    let value = bytes.subarray(at, end);
    at = end;
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new Error('DER integer too long for ES256');
    return Buffer.concat([Buffer.alloc(size - value.length), value]);
  };
  const r = integer();
  const s = integer();
  if (at !== sequenceEnd || at !== bytes.length) throw new Error('Not a DER ECDSA signature');
  return Buffer.concat([r, s]);
}
