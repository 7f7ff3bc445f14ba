import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  randomBytes,
  sign,
} from 'node:crypto';
import { chmod, mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  compactJwt,
  ID_TOKEN_ALG,
  jwtSigningInput,
  type PublicSigningJwk,
  type SignedTokenClaims,
} from '#lib/domain/id-token';
import type { IdTokenSigner, PairwiseSubjects, SigningKeySet } from '#lib/domain/ports';
import type { Tenant } from '#lib/domain/tenant';
import { tenantIdMessage, tenantSubjectMessage } from './subject';

/** What the local key file holds: the P-256 private key (a JWK) and the pairwise-subject secret. */
interface KeyFile {
  signingKey: JsonWebKey;
  subjectSecret: string;
}

/** Owner read and write only: the file holds a private key. */
const KEY_FILE_MODE = 0o600;

/**
 * Makes the local key file unless it exists: a fresh P-256 key pair and a 256-bit subject secret, written
 * with mode 0600 (created so, never widened afterwards; an existing file is narrowed to 0600). Kept in
 * DATA_DIR, the same key signs across restarts, so a board application's cached JWKS stays valid.
 */
export async function ensureLocalKeyFile(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const content: KeyFile = {
    signingKey: privateKey.export({ format: 'jwk' }),
    subjectSecret: randomBytes(32).toString('base64url'),
  };
  try {
    const file = await open(path, 'wx', KEY_FILE_MODE);
    try {
      await file.writeFile(`${JSON.stringify(content)}\n`);
    } finally {
      await file.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (((await stat(path)).mode & 0o777) !== KEY_FILE_MODE) await chmod(path, KEY_FILE_MODE);
  }
}

interface LoadedKeys {
  privateKey: KeyObject;
  publicJwk: PublicSigningJwk;
  subjectSecret: Buffer;
}

/**
 * The ID token keys of the local runtime, read from its key file on first use: signs with the private key,
 * derives pairwise subjects with the secret, and publishes the public key under its RFC 7638 thumbprint.
 */
export class LocalIdTokenKeys implements IdTokenSigner, PairwiseSubjects, SigningKeySet {
  #loaded: Promise<LoadedKeys> | undefined;

  constructor(private readonly path: string) {}

  async sign(claims: SignedTokenClaims): Promise<string> {
    const { privateKey, publicJwk } = await this.#keys();
    const input = jwtSigningInput(publicJwk.kid, claims);
    // IEEE P1363 is the raw r‖s a JWS carries; Node's default (DER) is what KMS returns.
    return compactJwt(
      input,
      sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    );
  }

  subjectOf(tenant: Tenant, userId: string): Promise<string> {
    return this.#mac(tenantSubjectMessage(tenant, userId));
  }

  tenantIdOf(tenant: Tenant): Promise<string> {
    return this.#mac(tenantIdMessage(tenant));
  }

  async #mac(message: Buffer): Promise<string> {
    const { subjectSecret } = await this.#keys();
    return createHmac('sha256', subjectSecret).update(message).digest('base64url');
  }

  async publicKeys(): Promise<PublicSigningJwk[]> {
    return [(await this.#keys()).publicJwk];
  }

  #keys(): Promise<LoadedKeys> {
    this.#loaded ??= this.#load();
    // A failed read is tried again on the next use rather than remembered.
    this.#loaded.catch(() => {
      this.#loaded = undefined;
    });
    return this.#loaded;
  }

  async #load(): Promise<LoadedKeys> {
    const file = JSON.parse(await readFile(this.path, 'utf8')) as KeyFile;
    const privateKey = createPrivateKey({ key: file.signingKey, format: 'jwk' });
    const { x, y } = createPublicKey(privateKey).export({ format: 'jwk' });
    if (typeof x !== 'string' || typeof y !== 'string')
      throw new Error('The local signing key is not an EC key');
    return {
      privateKey,
      publicJwk: { kty: 'EC', crv: 'P-256', x, y, kid: jwkThumbprint(x, y), alg: ID_TOKEN_ALG, use: 'sig' },
      subjectSecret: Buffer.from(file.subjectSecret, 'base64url'),
    };
  }
}

/** The RFC 7638 thumbprint of a P-256 public key: SHA-256 of its required members in order. */
export function jwkThumbprint(x: string, y: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
    .digest('base64url');
}
