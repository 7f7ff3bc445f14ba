import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { KeyRotation, KeyringPublicKeys, KeyringSigner } from '#lib/adapters/signing/keyring-keys';
import { open } from '#lib/adapters/signing/sealed-box';
import { DependencyUnavailableError } from '#lib/domain/errors';
import type { IdTokenClaims } from '#lib/domain/id-token';
import { type Keyring, LOCAL_ROTATION, type RotationPolicy } from '#lib/domain/keyring';
import type { Clock } from '#lib/domain/ports';
import type { Tenant } from '#lib/domain/tenant';
import { CountingKeyEncryption, InMemoryKeyringStore } from '#test/support/keyring';

const ORG_A: Tenant = { kind: 'organization', id: 'org_a' };
const START = Date.parse('2026-03-01T00:00:00.000Z');
const MINUTE = 60_000;

/** A clock the test moves by hand. */
function manualClock(at = START): Clock & { at: number; advance(ms: number): void } {
  const clock = {
    at,
    now: () => new Date(clock.at),
    advance: (ms: number) => {
      clock.at += ms;
    },
  };
  return clock;
}

function claims(clock: Clock, jti: string): IdTokenClaims {
  const iat = Math.floor(clock.now().getTime() / 1000);
  return {
    iss: 'https://embed.example.com',
    aud: 'https://board.example.com',
    sub: 'subject',
    tid: 'tenant',
    user_id: 'customer-42',
    email: 'ada@example.com',
    given_name: 'Ada',
    family_name: 'Lovelace',
    picture: null,
    plan: null,
    metadata: {},
    board_id: 'board_1',
    board_name: null,
    sid: 'ses_1',
    iat,
    exp: iat + 300,
    session_exp: iat + 3600,
    jti,
  };
}

/** A stage's keys in memory: the rotation, a signing environment and discovery, all on one clock. */
async function stage(policy: RotationPolicy = LOCAL_ROTATION, refreshMs = 60_000) {
  const clock = manualClock();
  const store = new InMemoryKeyringStore();
  const encryption = new CountingKeyEncryption();
  const rotation = new KeyRotation(store, encryption, clock, policy);
  await rotation.scheduled();
  const signer = new KeyringSigner(store, encryption, clock, refreshMs);
  const discovery = new KeyringPublicKeys(store, clock, refreshMs);
  /** Whether `token` verifies against the JWKS discovery publishes now, at the clock's time. */
  const verifies = async (token: string) => {
    const jwks = createLocalJWKSet({ keys: await new KeyringPublicKeys(store, clock).publicKeys() });
    return jwtVerify(token, jwks, { currentDate: clock.now() }).then(
      () => true,
      () => false,
    );
  };
  return { clock, store, encryption, rotation, signer, discovery, verifies };
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

describe('the keyring in memory (no KMS call on a warm environment)', () => {
  it('signs 1,000 tokens and derives 2,000 subjects with one decryption and one keyring read', async () => {
    const { store, encryption, signer, clock } = await stage();
    store.reads = 0;
    for (let i = 0; i < 1000; i++) {
      await signer.subjectOf(ORG_A, `user-${i}`);
      await signer.tenantIdOf(ORG_A);
      await signer.sign(claims(clock, `jti-${i}`));
    }
    expect(encryption.decrypts).toBe(1);
    expect(store.reads).toBe(1);
  });

  it('re-reads the keyring once its refresh period has passed, and never decrypts again', async () => {
    const { store, encryption, signer, clock } = await stage(LOCAL_ROTATION, 60_000);
    await signer.sign(claims(clock, 'a'));
    store.reads = 0;
    clock.advance(59_999);
    await signer.sign(claims(clock, 'b'));
    expect(store.reads).toBe(0);
    clock.advance(1);
    await signer.sign(claims(clock, 'c'));
    expect(store.reads).toBe(1);
    expect(encryption.decrypts).toBe(1);
  });

  it('keeps signing with the keyring it read while the table cannot be read, up to two minutes after that read', async () => {
    const { store, signer, clock } = await stage();
    await signer.sign(claims(clock, 'a'));
    store.read = async () => {
      throw new Error('DynamoDB is away');
    };
    clock.advance(MINUTE);
    await expect(signer.sign(claims(clock, 'b'))).resolves.toMatch(/^ey/);
    clock.advance(MINUTE - 1);
    await expect(signer.sign(claims(clock, 'c'))).resolves.toMatch(/^ey/);
  });

  it('answers 503 once the keyring it has is older than two minutes and the table still cannot be read, so a retired key stops signing', async () => {
    const { store, signer, rotation, clock } = await stage();
    const before = await signer.sign(claims(clock, 'a'));
    const read = store.read.bind(store);
    // The compromised key is retired while this environment's re-reads are throttled.
    await rotation.retire(decodeProtectedHeader(before).kid as string);
    store.read = async () => {
      throw new DependencyUnavailableError({ cause: new Error('ProvisionedThroughputExceededException') });
    };
    clock.advance(2 * MINUTE);
    await expect(signer.sign(claims(clock, 'b'))).rejects.toMatchObject({
      name: 'DependencyUnavailableError',
    });
    // A failure that is no outage is still reported as one: the keyring is what is unavailable.
    store.read = async () => {
      throw new Error('socket hang up');
    };
    await expect(signer.sign(claims(clock, 'c'))).rejects.toMatchObject({
      name: 'DependencyUnavailableError',
    });
    // The table answers again: the environment signs with the next key.
    store.read = read;
    const after = await signer.sign(claims(clock, 'd'));
    expect(decodeProtectedHeader(after).kid).not.toBe(decodeProtectedHeader(before).kid);
  });

  it('stops publishing the JWKS it read once it is older than two minutes and the table cannot be read', async () => {
    const { store, discovery, clock } = await stage();
    const published = await discovery.publicKeys();
    store.readPublic = async () => {
      throw new Error('DynamoDB is away');
    };
    clock.advance(2 * MINUTE - 1);
    await expect(discovery.publicKeys()).resolves.toEqual(published);
    clock.advance(1);
    await expect(discovery.publicKeys()).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
  });

  it('answers 503 (dependency unavailable) before the keyring is made', async () => {
    const signer = new KeyringSigner(new InMemoryKeyringStore(), new CountingKeyEncryption(), manualClock());
    await expect(signer.sign(claims(manualClock(), 'a'))).rejects.toMatchObject({
      name: 'DependencyUnavailableError',
    });
  });

  it('stores no private key and no subject secret in plain text, and discovery reads no sealed value', async () => {
    const { store, signer, discovery, clock } = await stage();
    const keyring = store.keyring as Keyring;
    const token = await signer.sign(claims(clock, 'a'));
    const { kid } = decodeProtectedHeader(token);
    // The sealed halves open only with the sealing key, which only KMS (here the stand-in) decrypts.
    expect(Object.keys(keyring.privateKeys)).toEqual([kid]);
    expect(JSON.stringify(keyring)).not.toMatch(/"d"/);
    expect(() => open(createThrowawayKey(), keyring.subjectSecret, 'subject-secret')).toThrow();
    const published = await discovery.publicKeys();
    expect(published).toEqual([expect.objectContaining({ kid, kty: 'EC', crv: 'P-256', alg: 'ES256' })]);
    expect(Object.keys(published[0] ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  });

  it('derives subjects that differ per tenant and stay the same across a rotation', async () => {
    const { signer, rotation, clock } = await stage();
    const before = await signer.subjectOf(ORG_A, 'u');
    expect(await signer.subjectOf({ kind: 'organization', id: 'org_b' }, 'u')).not.toBe(before);
    await rotation.now();
    clock.advance(LOCAL_ROTATION.publishAheadMs + LOCAL_ROTATION.keepAfterMs + 1);
    await rotation.scheduled();
    const fresh = new KeyringSigner((await stage()).store, new CountingKeyEncryption(), clock);
    expect(await signer.subjectOf(ORG_A, 'u')).toBe(before);
    // Another stage's keyring has a secret of its own.
    expect(await fresh.subjectOf(ORG_A, 'u')).not.toBe(before);
  });
});

describe('the keyring rotation, driven by an injected clock', () => {
  it('publishes the next key before it signs, switches after the overlap, and retires the old key after its tokens expire', async () => {
    const policy = LOCAL_ROTATION;
    const { signer, rotation, clock, verifies, discovery } = await stage(policy);
    const before = await signer.sign(claims(clock, 'before'));
    const first = kidOf(before);

    // Not due yet: the schedule writes nothing.
    clock.advance(policy.rotateEveryMs - policy.publishAheadMs - 1);
    expect((await rotation.scheduled()).outcome).toBe('not-due');
    clock.advance(1);
    expect((await rotation.scheduled()).outcome).toBe('scheduled');
    clock.advance(60_000);

    // During the overlap: both keys published, the old one still signs.
    const during = await signer.sign(claims(clock, 'during'));
    expect(kidOf(during)).toBe(first);
    const published = (await discovery.publicKeys()).map((key) => key.kid);
    expect(published).toHaveLength(2);
    const next = published.find((kid) => kid !== first);
    expect(await verifies(during)).toBe(true);

    // After the overlap: the next key signs, and tokens of both verify while their exp holds.
    clock.advance(policy.publishAheadMs - 60_000);
    const after = await signer.sign(claims(clock, 'after'));
    expect(kidOf(after)).toBe(next);
    expect(await verifies(after)).toBe(true);
    clock.advance(4 * MINUTE);
    expect(await verifies(during)).toBe(false); // its own exp (5 min) has passed
    const lastOfOld = await signer.sign(claims(clock, 'late'));
    expect(kidOf(lastOfOld)).toBe(next);

    // Once the old key retires, the JWKS lists the next alone, and the old key's tokens verify no more,
    // even judged at a time their exp held.
    clock.advance(policy.keepAfterMs - 4 * MINUTE);
    expect((await discovery.publicKeys()).map((key) => key.kid)).toEqual([next]);
    const jwks = createLocalJWKSet({ keys: await discovery.publicKeys() });
    const whileValid = { currentDate: new Date(START) };
    await expect(jwtVerify(before, jwks, whileValid)).rejects.toMatchObject({
      code: 'ERR_JWKS_NO_MATCHING_KEY',
    });
    expect((await rotation.scheduled()).outcome).toBe('not-due');
  });

  it('keeps every token verifiable while its exp holds, whenever in the cycle it was signed', async () => {
    const policy = LOCAL_ROTATION;
    const { signer, rotation, clock, verifies } = await stage(policy, 1);
    const step = MINUTE;
    const issued: { token: string; exp: number }[] = [];
    // Three full rotation periods, a token every minute, the schedule run every minute.
    for (let t = 0; t < 3 * policy.rotateEveryMs; t += step) {
      await rotation.scheduled();
      issued.push({ token: await signer.sign(claims(clock, `t${t}`)), exp: clock.at + 300_000 });
      for (const { token, exp } of issued) expect(await verifies(token)).toBe(clock.at < exp);
      clock.advance(step);
    }
    expect(new Set(issued.map(({ token }) => kidOf(token))).size).toBeGreaterThanOrEqual(3);
  });

  it('retires a compromised key at once: its tokens stop verifying, and a new key signs at once', async () => {
    const { signer, rotation, clock, verifies } = await stage(LOCAL_ROTATION, 1);
    const token = await signer.sign(claims(clock, 'a'));
    const compromised = kidOf(token) as string;
    expect(await verifies(token)).toBe(true);
    expect((await rotation.retire(compromised)).outcome).toBe('retired');
    expect(await verifies(token)).toBe(false);
    // A signing environment learns of it when it next reads the keyring (its refresh period, here 1 ms).
    clock.advance(1);
    const next = await signer.sign(claims(clock, 'b'));
    expect(kidOf(next)).not.toBe(compromised);
    expect(await verifies(next)).toBe(true);
  });

  it('retires a compromised successor before it signs, and the current key signs on', async () => {
    const { signer, rotation, clock, store, verifies } = await stage(LOCAL_ROTATION, 1);
    const current = kidOf(await signer.sign(claims(clock, 'a')));
    await rotation.now();
    const pending = store.keyring?.keys.find((key) => key.kid !== current)?.kid as string;
    expect((await rotation.retire(pending)).outcome).toBe('retired');
    clock.advance(LOCAL_ROTATION.publishAheadMs + LOCAL_ROTATION.keepAfterMs);
    const token = await signer.sign(claims(clock, 'b'));
    expect(kidOf(token)).toBe(current);
    expect(await verifies(token)).toBe(true);
  });

  it('tells an operator that an unknown key was not retired, and writes nothing', async () => {
    const { rotation, store } = await stage();
    const version = store.keyring?.version;
    expect((await rotation.retire('no-such-kid')).outcome).toBe('unknown-key');
    expect(store.keyring?.version).toBe(version);
  });

  it('refuses a rotation that meets another rotation’s write, leaving that write in place', async () => {
    const { rotation, store, clock } = await stage();
    const raced = new KeyRotation(
      {
        read: () => store.read(),
        readPublic: () => store.readPublic(),
        replace: async (keyring, previous) => {
          await rotation.now();
          return store.replace(keyring, previous);
        },
      },
      new CountingKeyEncryption(),
      clock,
      LOCAL_ROTATION,
    );
    await expect(raced.now()).rejects.toMatchObject({ name: 'KeyringChangedError' });
    expect(store.keyring?.keys).toHaveLength(2);
  });
});

function createThrowawayKey() {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}
