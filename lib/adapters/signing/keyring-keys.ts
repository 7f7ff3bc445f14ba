/**
 * The ID token keys of a stage's keyring (lib/domain/keyring.ts), used in memory. A signing environment
 * reads the keyring item (DynamoDB, at most once per `refreshMs`), decrypts the sealing private key with
 * one `kms:Decrypt` on first use, and opens the signing keys and the subject secret with it locally: a warm
 * environment signs and derives subjects without calling KMS at all. Nothing opened is written anywhere.
 */
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
} from 'node:crypto';
import { DependencyUnavailableError } from '#lib/domain/errors';
import {
  compactJwt,
  ID_TOKEN_ALG,
  jwtSigningInput,
  type PublicSigningJwk,
  type SignedTokenClaims,
} from '#lib/domain/id-token';
import {
  immediateRotation,
  type Keyring,
  type KeyringEntry,
  type NewSigningKey,
  type PublicKeyring,
  publishedEntries,
  type RotationPolicy,
  type RotationStep,
  retirement,
  scheduledRotation,
  signingEntry,
} from '#lib/domain/keyring';
import type {
  Clock,
  IdTokenSigner,
  KeyEncryption,
  KeyringStore,
  PairwiseSubjects,
  SigningKeySet,
} from '#lib/domain/ports';
import type { Tenant } from '#lib/domain/tenant';
import { onFirstUse } from '#lib/platform/on-first-use';
import { generateSealingKeyPair, open, seal } from './sealed-box';
import { tenantIdMessage, tenantSubjectMessage } from './subject';

/**
 * How long an environment uses the keyring it read before reading it again: far below the publication
 * lead of a rotation (so every environment knows the next key before it signs), and the longest a
 * compromised key's retirement takes to reach an environment that signs.
 */
export const KEYRING_REFRESH_MS = 60_000;

/**
 * How long discovery serves the keyring it read: shorter than the signing functions' refresh, so a key
 * that signs at once (after a compromised one is retired) is in the JWKS about as soon as tokens name it.
 */
export const PUBLISHED_KEYRING_REFRESH_MS = 10_000;

/**
 * The oldest keyring an environment signs with or publishes while it cannot read a newer one: two refresh
 * periods, so a read that fails once or twice (a throttled table) costs nothing, and a retired key stops
 * signing within two minutes whatever the table does. Past it, signing and discovery answer 503 until a
 * read succeeds.
 */
export const KEYRING_MAX_AGE_MS = 2 * KEYRING_REFRESH_MS;

const SUBJECT_LABEL = 'subject-secret';
const signingLabel = (kid: string) => `signing-key|${kid}`;

/** The RFC 7638 thumbprint of a P-256 public key: SHA-256 of its required members in order. */
export function jwkThumbprint(x: string, y: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
    .digest('base64url');
}

function sealingPublicKeyOf(keyring: Pick<Keyring, 'sealingPublicKey'>): KeyObject {
  return createPublicKey({
    key: Buffer.from(keyring.sealingPublicKey, 'base64url'),
    format: 'der',
    type: 'spki',
  });
}

/** A fresh ES256 key, its `kid` its thumbprint and its private half sealed to the keyring's sealing key. */
export function generateSigningKey(keyring: Pick<Keyring, 'sealingPublicKey'>): NewSigningKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { x, y, d } = privateKey.export({ format: 'jwk' });
  if (!x || !y || !d) throw new Error('Node made an EC key without coordinates');
  const kid = jwkThumbprint(x, y);
  return {
    kid,
    x,
    y,
    sealedPrivateKey: seal(sealingPublicKeyOf(keyring), Buffer.from(d, 'base64url'), signingLabel(kid)),
  };
}

/**
 * A new keyring: a sealing key pair whose private half `encryption` (KMS) encrypts, a random 256-bit
 * subject secret, and a first signing key that signs at once. Version 0, until the store writes it.
 */
export async function newKeyring(encryption: KeyEncryption, now: number): Promise<Keyring> {
  const sealing = generateSealingKeyPair();
  const sealingPublicKey = sealing.publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
  const encrypted = await encryption.encrypt(sealing.privateKey.export({ format: 'der', type: 'pkcs8' }));
  const base: Keyring = {
    version: 0,
    keys: [],
    sealingPublicKey,
    sealingPrivateKey: Buffer.from(encrypted).toString('base64'),
    subjectSecret: seal(sealing.publicKey, randomBytes(32), SUBJECT_LABEL),
    privateKeys: {},
  };
  const first = generateSigningKey(base);
  return {
    ...base,
    keys: [{ kid: first.kid, x: first.x, y: first.y, createdAt: now, signsFrom: now }],
    privateKeys: { [first.kid]: first.sealedPrivateKey },
  };
}

function publicJwkOf(entry: KeyringEntry): PublicSigningJwk {
  return { kty: 'EC', crv: 'P-256', x: entry.x, y: entry.y, kid: entry.kid, alg: ID_TOKEN_ALG, use: 'sig' };
}

/**
 * A keyring read, kept for `refreshMs`. A failed re-read keeps the last one read while it is younger than
 * `maxAgeMs` (DynamoDB briefly away or throttling need not stop signing), and past that is an outage: a
 * keyring that old may still hold a key retired since, which must not sign (or be published) for long. A
 * failed first read throws.
 */
class CachedRead<T> {
  #value: { read: T; at: number } | undefined;
  #reading: Promise<T> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly clock: Clock,
    private readonly refreshMs: number,
    private readonly maxAgeMs: number,
  ) {}

  async get(): Promise<T> {
    const now = this.clock.now().getTime();
    if (this.#value && now - this.#value.at < this.refreshMs) return this.#value.read;
    this.#reading ??= this.read().finally(() => {
      this.#reading = undefined;
    });
    try {
      const read = await this.#reading;
      this.#value = { read, at: now };
      return read;
    } catch (error) {
      if (!this.#value) throw error;
      if (now - this.#value.at < this.maxAgeMs) return this.#value.read;
      throw error instanceof DependencyUnavailableError
        ? error
        : new DependencyUnavailableError({ cause: error });
    }
  }
}

function keyringMissing(): never {
  throw new DependencyUnavailableError({
    cause: new Error(
      'The signing keyring is not made yet: the key rotation makes it (or the admin CLI command rotate-signing-key)',
    ),
  });
}

/** Signs ID tokens and logout tokens, and derives pairwise subjects, with the keyring's keys in memory. */
export class KeyringSigner implements IdTokenSigner, PairwiseSubjects {
  readonly #keyring: CachedRead<Keyring | undefined>;
  readonly #privateKeys = new Map<string, KeyObject>();
  #sealingKey: (() => Promise<KeyObject>) | undefined;
  #subjectSecret: Buffer | undefined;

  constructor(
    store: KeyringStore,
    private readonly encryption: KeyEncryption,
    private readonly clock: Clock,
    refreshMs = KEYRING_REFRESH_MS,
    maxAgeMs = KEYRING_MAX_AGE_MS,
  ) {
    this.#keyring = new CachedRead(() => store.read(), clock, refreshMs, maxAgeMs);
  }

  async sign(claims: SignedTokenClaims): Promise<string> {
    const keyring = (await this.#keyring.get()) ?? keyringMissing();
    const entry = signingEntry(keyring.keys, this.clock.now().getTime());
    if (!entry) keyringMissing();
    const privateKey = await this.#privateKey(keyring, entry);
    const input = jwtSigningInput(entry.kid, claims);
    // IEEE P1363 is the raw r‖s a JWS carries (Node's default is DER).
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
    if (!this.#subjectSecret) {
      const keyring = (await this.#keyring.get()) ?? keyringMissing();
      this.#subjectSecret = open(await this.#sealing(keyring), keyring.subjectSecret, SUBJECT_LABEL);
    }
    return createHmac('sha256', this.#subjectSecret).update(message).digest('base64url');
  }

  async #privateKey(keyring: Keyring, entry: KeyringEntry): Promise<KeyObject> {
    const known = this.#privateKeys.get(entry.kid);
    if (known) return known;
    const sealed = keyring.privateKeys[entry.kid];
    if (!sealed) throw new Error(`The keyring holds no private half for key ${entry.kid}`);
    const d = open(await this.#sealing(keyring), sealed, signingLabel(entry.kid));
    const privateKey = createPrivateKey({
      key: { kty: 'EC', crv: 'P-256', x: entry.x, y: entry.y, d: d.toString('base64url') },
      format: 'jwk',
    });
    this.#privateKeys.set(entry.kid, privateKey);
    return privateKey;
  }

  /** The sealing private key: decrypted by KMS once per environment (a failure is tried again next time). */
  #sealing(keyring: Keyring): Promise<KeyObject> {
    this.#sealingKey ??= onFirstUse(async () => {
      const der = await this.encryption.decrypt(Buffer.from(keyring.sealingPrivateKey, 'base64'));
      return createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
    });
    return this.#sealingKey();
  }
}

/** The JWKS of the keyring: public halves only, read without any KMS call or sealed value. */
export class KeyringPublicKeys implements SigningKeySet {
  readonly #keyring: CachedRead<PublicKeyring | undefined>;

  constructor(
    store: KeyringStore,
    private readonly clock: Clock,
    refreshMs = PUBLISHED_KEYRING_REFRESH_MS,
    maxAgeMs = KEYRING_MAX_AGE_MS,
  ) {
    this.#keyring = new CachedRead(() => store.readPublic(), clock, refreshMs, maxAgeMs);
  }

  async publicKeys(): Promise<PublicSigningJwk[]> {
    const keyring = (await this.#keyring.get()) ?? keyringMissing();
    return publishedEntries(keyring.keys, this.clock.now().getTime()).map(publicJwkOf);
  }
}

/** What a rotation command did: the outcome, and the keys the keyring holds after it. */
export interface RotationResult {
  outcome: RotationStep['outcome'] | 'created';
  keys: KeyringEntry[];
}

/**
 * Rotates the keyring: the schedule's step, an operator's rotation at once, or a compromised key's
 * retirement. Never decrypts: new keys are sealed to the keyring's public sealing key; only making the
 * keyring encrypts its sealing key (`kms:Encrypt`).
 */
export class KeyRotation {
  constructor(
    private readonly store: KeyringStore,
    private readonly encryption: KeyEncryption,
    private readonly clock: Clock,
    private readonly policy: RotationPolicy,
  ) {}

  /** The scheduled step: makes the keyring when there is none. */
  scheduled(): Promise<RotationResult> {
    return this.#step((keyring, now) =>
      scheduledRotation(keyring, now, this.policy, () => generateSigningKey(keyring)),
    );
  }

  /** Schedules the next key now (published now, signing after the publication lead). */
  now(): Promise<RotationResult> {
    return this.#step((keyring, now) =>
      immediateRotation(keyring, now, this.policy, () => generateSigningKey(keyring)),
    );
  }

  /** Retires the key `kid` at once (a compromise). */
  retire(kid: string): Promise<RotationResult> {
    return this.#step(
      (keyring, now) => retirement(keyring, kid, now, () => generateSigningKey(keyring)),
      false,
    );
  }

  async #step(
    step: (keyring: Keyring, now: number) => RotationStep,
    makesKeyring = true,
  ): Promise<RotationResult> {
    const now = this.clock.now().getTime();
    const stored = await this.store.read();
    if (!stored) {
      if (!makesKeyring) return { outcome: 'unknown-key', keys: [] };
      const made = await this.store.replace(await newKeyring(this.encryption, now), undefined);
      return { outcome: 'created', keys: made.keys };
    }
    const { keyring, outcome } = step(stored, now);
    if (!keyring) return { outcome, keys: stored.keys };
    const written = await this.store.replace(keyring, stored.version);
    return { outcome, keys: written.keys };
  }
}
