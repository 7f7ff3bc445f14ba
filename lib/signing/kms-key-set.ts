import { createPublicKey } from 'node:crypto';
import { GetPublicKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { ID_TOKEN_ALG, type PublicSigningJwk } from '#lib/domain/id-token';
import type { SigningKeySet } from '#lib/domain/ports';
import { kmsKeyId } from './kms';

/**
 * The JWKS of KMS keys: each key's public half (GetPublicKey, DER SubjectPublicKeyInfo) as a JWK under
 * its key id. A key's public half never changes, so each is fetched once per process.
 */
export class KmsSigningKeySet implements SigningKeySet {
  readonly #cache = new Map<string, Promise<PublicSigningJwk>>();

  constructor(
    private readonly kms: KMSClient,
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
    const { PublicKey } = await this.kms.send(new GetPublicKeyCommand({ KeyId: keyArn }));
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
