import { describe, expect, it } from 'vitest';
import {
  immediateRotation,
  type Keyring,
  type NewSigningKey,
  publishedEntries,
  type RotationPolicy,
  retirement,
  scheduledRotation,
  signingEntry,
} from '#lib/domain/keyring';

const POLICY: RotationPolicy = { rotateEveryMs: 1000, publishAheadMs: 100, keepAfterMs: 50 };

function keys() {
  let n = 0;
  return (): NewSigningKey => {
    n += 1;
    return { kid: `k${n}`, x: `x${n}`, y: `y${n}`, sealedPrivateKey: `sealed-${n}` };
  };
}

function keyringAt(now: number): Keyring {
  return {
    version: 1,
    keys: [{ kid: 'k0', x: 'x', y: 'y', createdAt: now, signsFrom: now }],
    sealingPublicKey: 'pub',
    sealingPrivateKey: 'enc',
    subjectSecret: 'sealed-subject',
    privateKeys: { k0: 'sealed-0' },
  };
}

describe('the keyring schedule', () => {
  it('schedules the next key once the current has signed for the period less the publication lead', () => {
    const keyring = keyringAt(0);
    expect(scheduledRotation(keyring, 899, POLICY, keys())).toEqual({
      keyring: undefined,
      outcome: 'not-due',
    });
    const { keyring: next, outcome } = scheduledRotation(keyring, 900, POLICY, keys());
    expect(outcome).toBe('scheduled');
    expect(next?.keys).toEqual([
      { kid: 'k0', x: 'x', y: 'y', createdAt: 0, signsFrom: 0, retiresAt: 1050 },
      { kid: 'k1', x: 'x1', y: 'y1', createdAt: 900, signsFrom: 1000 },
    ]);
    expect(next?.privateKeys).toEqual({ k0: 'sealed-0', k1: 'sealed-1' });
  });

  it('publishes the next key from its creation, signs with it from its signsFrom, and drops the old at retiresAt', () => {
    const next = scheduledRotation(keyringAt(0), 900, POLICY, keys()).keyring as Keyring;
    expect(signingEntry(next.keys, 999)?.kid).toBe('k0');
    expect(publishedEntries(next.keys, 900).map((k) => k.kid)).toEqual(['k0', 'k1']);
    expect(signingEntry(next.keys, 1000)?.kid).toBe('k1');
    expect(publishedEntries(next.keys, 1049).map((k) => k.kid)).toEqual(['k0', 'k1']);
    expect(publishedEntries(next.keys, 1050).map((k) => k.kid)).toEqual(['k1']);
    const cleaned = scheduledRotation(next, 1050, POLICY, keys()).keyring as Keyring;
    expect(cleaned.keys.map((k) => k.kid)).toEqual(['k1']);
    expect(cleaned.privateKeys).toEqual({ k1: 'sealed-1' });
  });

  it('schedules nothing more while a next key waits, even when asked at once', () => {
    const next = scheduledRotation(keyringAt(0), 900, POLICY, keys()).keyring as Keyring;
    expect(scheduledRotation(next, 950, POLICY, keys()).outcome).toBe('already-scheduled');
    expect(immediateRotation(next, 950, POLICY, keys()).keyring?.keys).toHaveLength(2);
  });

  it('rotates at once on demand, still publishing ahead', () => {
    const { keyring } = immediateRotation(keyringAt(0), 10, POLICY, keys());
    expect(keyring?.keys.map((k) => [k.kid, k.signsFrom, k.retiresAt])).toEqual([
      ['k0', 0, 160],
      ['k1', 110, undefined],
    ]);
  });

  it('retiring the signing key makes the scheduled successor sign at once', () => {
    const next = scheduledRotation(keyringAt(0), 900, POLICY, keys()).keyring as Keyring;
    const { keyring } = retirement(next, 'k0', 920, keys());
    expect(keyring?.keys).toEqual([{ kid: 'k1', x: 'x1', y: 'y1', createdAt: 900, signsFrom: 920 }]);
    expect(keyring?.privateKeys).toEqual({ k1: 'sealed-1' });
  });

  it('retiring the only key makes a new one that signs at once, ahead of an older key still kept', () => {
    const rotated = scheduledRotation(keyringAt(0), 900, POLICY, keys()).keyring as Keyring;
    // k1 signs from 1000, k0 is kept until 1050; k1 is compromised at 1010.
    const { keyring } = retirement(rotated, 'k1', 1010, () => ({
      kid: 'k9',
      x: 'x9',
      y: 'y9',
      sealedPrivateKey: 'sealed-9',
    }));
    expect(signingEntry(keyring?.keys ?? [], 1010)?.kid).toBe('k9');
    expect(publishedEntries(keyring?.keys ?? [], 1010).map((k) => k.kid)).toEqual(['k0', 'k9']);
  });
});
