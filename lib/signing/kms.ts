import { createHash, createPublicKey } from 'node:crypto';
import {
  compactJwt,
  ID_TOKEN_ALG,
  jwtSigningInput,
  type PublicSigningJwk,
  type SignedTokenClaims,
} from '#lib/domain/id-token';
import type { IdTokenSigner, PairwiseSubjects, SigningKeySet } from '#lib/domain/ports';
import type { KmsApi } from './kms-json';
import { subjectMessage } from './subject';

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
    private readonly kms: KmsApi,
    private readonly signingKeyArn: string,
    private readonly subjectKeyArn: string,
  ) {}

  async sign(claims: SignedTokenClaims): Promise<string> {
    const input = jwtSigningInput(kmsKeyId(this.signingKeyArn), claims);
    const bytes = Buffer.from(input, 'utf8');
    const raw = bytes.length <= KMS_RAW_MESSAGE_MAX_BYTES;
    const { Signature } = await this.kms.sign({
      KeyId: this.signingKeyArn,
      SigningAlgorithm: 'ECDSA_SHA_256',
      MessageType: raw ? 'RAW' : 'DIGEST',
      Message: raw ? bytes : createHash('sha256').update(bytes).digest(),
    });
    if (!Signature) throw new Error('KMS answered Sign without a signature');
    return compactJwt(input, derToJoseSignature(Signature));
  }

  async subjectOf(tenantId: string, userId: string): Promise<string> {
    const { Mac } = await this.kms.generateMac({
      KeyId: this.subjectKeyArn,
      MacAlgorithm: 'HMAC_SHA_256',
      Message: subjectMessage(tenantId, userId),
    });
    if (!Mac) throw new Error('KMS answered GenerateMac without a MAC');
    return Buffer.from(Mac).toString('base64url');
  }
}

/**
 * The JWKS of KMS keys: each key's public half (GetPublicKey, DER SubjectPublicKeyInfo) as a JWK under
 * its key id. A key's public half never changes, so each is fetched once per process.
 */
export class KmsSigningKeySet implements SigningKeySet {
  readonly #cache = new Map<string, Promise<PublicSigningJwk>>();

  constructor(
    private readonly kms: KmsApi,
    private readonly keyArns: readonly string[],
  ) {}

  publicKeys(): Promise<PublicSigningJwk[]> {
    return Promise.all(this.keyArns.map((arn) => this.#publicKey(arn)));
  }

  #publicKey(keyArn: string): Promise<PublicSigningJwk> {
    let key = this.#cache.get(keyArn);
    if (!key) {
      key = this.#fetch(keyArn);
      this.#cache.set(keyArn, key);
      key.catch(() => this.#cache.delete(keyArn));
    }
    return key;
  }

  async #fetch(keyArn: string): Promise<PublicSigningJwk> {
    const { PublicKey } = await this.kms.getPublicKey({ KeyId: keyArn });
    if (!PublicKey) throw new Error('KMS answered GetPublicKey without a key');
    const { crv, x, y } = createPublicKey({
      key: Buffer.from(PublicKey),
      format: 'der',
      type: 'spki',
    }).export({
      format: 'jwk',
    });
    if (crv !== 'P-256' || typeof x !== 'string' || typeof y !== 'string') {
      throw new Error(`KMS key ${kmsKeyId(keyArn)} is not an ECC_NIST_P256 key`);
    }
    return { kty: 'EC', crv: 'P-256', x, y, kid: kmsKeyId(keyArn), alg: ID_TOKEN_ALG, use: 'sig' };
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
