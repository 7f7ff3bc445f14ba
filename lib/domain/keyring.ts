/**
 * The keyring of the keys that sign ID tokens and logout tokens, and its rotation schedule. Pure: when a
 * key is published, signs and retires is decided by times written into the keyring ahead of time, so every
 * execution environment switches keys at the same instant by its clock alone, and the keyring is read
 * rarely (functions/keys.ts) rather than on every token.
 *
 * A key's life: it is published in the JWKS from `createdAt`, signs from `signsFrom` (at least
 * `publishAheadMs` later, so board applications and caches have it before any token names it), and stays
 * published until `retiresAt`, set when its successor is scheduled: the successor's `signsFrom` plus
 * `keepAfterMs`, which outlasts every token the key signed. A retired key is dropped from the keyring.
 */

/** A signing key's public half and schedule (its private half is sealed apart, in `privateKeys`). */
export interface KeyringEntry {
  kid: string;
  /** The P-256 public key's coordinates (base64url), as the JWKS lists them. */
  x: string;
  y: string;
  /** Epoch milliseconds: published from then. */
  createdAt: number;
  /** Epoch milliseconds: signs from then, until a later key's `signsFrom`. */
  signsFrom: number;
  /** Epoch milliseconds: neither signs nor is published from then; unset while no successor is scheduled. */
  retiresAt?: number;
}

/** Everything the keyring item holds. Only the public halves and the schedule are readable without KMS. */
export interface Keyring {
  /** Incremented by each write; a write of an older version is refused (two rotations never interleave). */
  version: number;
  keys: KeyringEntry[];
  /** The stage's sealing public key (P-256, SPKI DER, base64url): what new keys are sealed to. */
  sealingPublicKey: string;
  /** Its private half (PKCS #8 DER), encrypted by the KMS key (base64): one `kms:Decrypt` opens the ring. */
  sealingPrivateKey: string;
  /** The pairwise-subject secret, sealed to the sealing key. */
  subjectSecret: string;
  /** Each key's private half (its JWK `d`), sealed to the sealing key, by `kid`. */
  privateKeys: Record<string, string>;
}

/** The part of the keyring discovery reads: the schedule and the public halves, never a sealed value. */
export type PublicKeyring = Pick<Keyring, 'version' | 'keys'>;

/** A newly generated signing key: its public entry's key fields and its sealed private half. */
export interface NewSigningKey {
  kid: string;
  x: string;
  y: string;
  sealedPrivateKey: string;
}

/** How often keys rotate, how long the next is published before it signs, how long the last outlives it. */
export interface RotationPolicy {
  rotateEveryMs: number;
  publishAheadMs: number;
  keepAfterMs: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * The stage's schedule on AWS: a new key every 30 days, published an hour before it signs (far longer than
 * the JWKS's 5-minute HTTP cache, a board application's own JWKS cache, and the signing functions' keyring
 * refresh), and the previous key kept 15 minutes after its last signature: ID tokens live 5 minutes and
 * logout tokens 2, plus the keyring refresh and clock skew.
 */
export const STAGE_ROTATION: RotationPolicy = {
  rotateEveryMs: 30 * DAY,
  publishAheadMs: 60 * MINUTE,
  keepAfterMs: 15 * MINUTE,
};

/**
 * The local runtime's schedule: the same cycle on a short period, so a developer (and the tests, with an
 * injected clock) see a rotation within minutes.
 */
export const LOCAL_ROTATION: RotationPolicy = {
  rotateEveryMs: 30 * MINUTE,
  publishAheadMs: 6 * MINUTE,
  keepAfterMs: 10 * MINUTE,
};

function isRetired(entry: KeyringEntry, now: number): boolean {
  return entry.retiresAt !== undefined && entry.retiresAt <= now;
}

/** The key that signs at `now`: the latest to have reached its `signsFrom`, unless retired. */
export function signingEntry(keys: readonly KeyringEntry[], now: number): KeyringEntry | undefined {
  let signing: KeyringEntry | undefined;
  for (const entry of keys) {
    if (entry.signsFrom > now || isRetired(entry, now)) continue;
    if (!signing || entry.signsFrom > signing.signsFrom) signing = entry;
  }
  return signing;
}

/** The keys the JWKS lists at `now`: every key created and not yet retired, the next one included. */
export function publishedEntries(keys: readonly KeyringEntry[], now: number): KeyringEntry[] {
  return keys.filter((entry) => entry.createdAt <= now && !isRetired(entry, now));
}

/** The key scheduled to sign after the current one, if any. */
function pendingEntry(keys: readonly KeyringEntry[], now: number): KeyringEntry | undefined {
  return keys.find((entry) => entry.signsFrom > now && !isRetired(entry, now));
}

function entryOf(key: NewSigningKey, now: number, signsFrom: number): KeyringEntry {
  return { kid: key.kid, x: key.x, y: key.y, createdAt: now, signsFrom };
}

/** The keyring without its retired keys (their private halves dropped with them). */
function withoutRetired(keyring: Keyring, now: number): Keyring {
  const keys = keyring.keys.filter((entry) => !isRetired(entry, now));
  const kept = new Set(keys.map((entry) => entry.kid));
  return {
    ...keyring,
    keys,
    privateKeys: Object.fromEntries(Object.entries(keyring.privateKeys).filter(([kid]) => kept.has(kid))),
  };
}

function adding(keyring: Keyring, key: NewSigningKey, entry: KeyringEntry): Keyring {
  return {
    ...keyring,
    keys: [...keyring.keys, entry],
    privateKeys: { ...keyring.privateKeys, [key.kid]: key.sealedPrivateKey },
  };
}

/**
 * The next key scheduled: published now, signing `publishAheadMs` later; the current key retires
 * `keepAfterMs` after that. With no key signing or scheduled (a new keyring, or every key retired), the
 * new key signs at once: no token names it before it exists, and a board application fetches the JWKS on a
 * `kid` it has not seen.
 */
function scheduleNext(keyring: Keyring, now: number, policy: RotationPolicy, key: NewSigningKey): Keyring {
  const current = signingEntry(keyring.keys, now);
  if (!current) return adding(keyring, key, entryOf(key, now, now));
  const signsFrom = now + policy.publishAheadMs;
  const retiring: Keyring = {
    ...keyring,
    keys: keyring.keys.map((entry) =>
      entry === current ? { ...entry, retiresAt: signsFrom + policy.keepAfterMs } : entry,
    ),
  };
  return adding(retiring, key, entryOf(key, now, signsFrom));
}

/** What a rotation step did, and the keyring to write (undefined: nothing to write). */
export interface RotationStep {
  keyring: Keyring | undefined;
  outcome: 'scheduled' | 'already-scheduled' | 'not-due' | 'retired' | 'unknown-key';
}

/**
 * The scheduled rotation at `now`: drops retired keys, and schedules the next key once the current one
 * has signed for `rotateEveryMs` less the publication lead (so keys sign for `rotateEveryMs` each), or at
 * once when nothing signs. Idempotent: run again before anything is due, it writes nothing.
 */
export function scheduledRotation(
  keyring: Keyring,
  now: number,
  policy: RotationPolicy,
  newKey: () => NewSigningKey,
): RotationStep {
  const kept = withoutRetired(keyring, now);
  const dropped = kept.keys.length !== keyring.keys.length;
  if (pendingEntry(kept.keys, now))
    return { keyring: dropped ? kept : undefined, outcome: 'already-scheduled' };
  const current = signingEntry(kept.keys, now);
  if (current && current.signsFrom + policy.rotateEveryMs - policy.publishAheadMs > now)
    return { keyring: dropped ? kept : undefined, outcome: 'not-due' };
  return { keyring: scheduleNext(kept, now, policy, newKey()), outcome: 'scheduled' };
}

/**
 * An operator's rotation at once: the next key is scheduled now (published now, signing after the
 * publication lead), whatever the schedule; when one is scheduled already, nothing changes.
 */
export function immediateRotation(
  keyring: Keyring,
  now: number,
  policy: RotationPolicy,
  newKey: () => NewSigningKey,
): RotationStep {
  const kept = withoutRetired(keyring, now);
  if (pendingEntry(kept.keys, now)) return { keyring: kept, outcome: 'already-scheduled' };
  return { keyring: scheduleNext(kept, now, policy, newKey()), outcome: 'scheduled' };
}

/**
 * A compromised key retired at once: dropped from the JWKS and from signing now, so no token it signed
 * verifies any more. If it signed, the scheduled successor signs at once, or a new key does (a board
 * application meets its `kid` and fetches the JWKS again); if it was the scheduled successor, the current
 * key signs on until the next rotation, no longer retiring.
 */
export function retirement(
  keyring: Keyring,
  kid: string,
  now: number,
  newKey: () => NewSigningKey,
): RotationStep {
  const kept = withoutRetired(keyring, now);
  const target = kept.keys.find((entry) => entry.kid === kid);
  if (!target) return { keyring: undefined, outcome: 'unknown-key' };
  const current = signingEntry(kept.keys, now);
  const pending = pendingEntry(kept.keys, now);
  const rest = withoutRetired(
    { ...kept, keys: kept.keys.map((entry) => (entry === target ? { ...entry, retiresAt: now } : entry)) },
    now,
  );
  if (target === pending) {
    return {
      keyring: {
        ...rest,
        keys: rest.keys.map((entry) => (entry.kid === current?.kid ? withoutRetirement(entry) : entry)),
      },
      outcome: 'retired',
    };
  }
  if (target !== current) return { keyring: rest, outcome: 'retired' };
  if (pending) {
    return {
      keyring: {
        ...rest,
        keys: rest.keys.map((entry) => (entry.kid === pending.kid ? { ...entry, signsFrom: now } : entry)),
      },
      outcome: 'retired',
    };
  }
  const key = newKey();
  return { keyring: adding(rest, key, entryOf(key, now, now)), outcome: 'retired' };
}

function withoutRetirement(entry: KeyringEntry): KeyringEntry {
  const { retiresAt: _, ...rest } = entry;
  return rest;
}

/** A keyring write refused: another rotation wrote a newer version first (the schedule runs it again). */
export class KeyringChangedError extends Error {
  override readonly name = 'KeyringChangedError';
  constructor() {
    super('The signing keyring changed while it was being rotated; nothing was written');
  }
}
