/**
 * The admin CLI's signing key commands: list the keyring's keys and their schedule, rotate at once, and
 * retire a compromised key at once. Rotating and retiring write the keyring item only: new keys are sealed
 * to the keyring's public sealing key, so neither needs any KMS permission. Making a keyring that does
 * not exist yet encrypts its sealing key with ID_TOKEN_KEYRING_KEY (the rotation function does that by
 * itself within ten minutes of a deploy).
 */

import { DynamoKeyringStore } from '#lib/adapters/dynamodb/keyring';
import { KeyRotation, type RotationResult } from '#lib/adapters/signing/keyring-keys';
import { kmsClient } from '#lib/adapters/signing/kms-client';
import { KmsKeyEncryption } from '#lib/adapters/signing/kms-key-encryption';
import { LocalKeyEncryption } from '#lib/adapters/signing/local-keys';
import { LOCAL_ROTATION, publishedEntries, STAGE_ROTATION, signingEntry } from '#lib/domain/keyring';
import type { KeyEncryption } from '#lib/domain/ports';
import { systemClock } from '#lib/platform/system';
import { type AdminCommand, type AdminContext, UsageError } from './command';

/** What encrypts a new keyring's sealing key: the KMS key (or locally the runtime's key file), if named. */
function keyEncryption(env: Readonly<Record<string, string | undefined>>): KeyEncryption {
  const keyId = env.ID_TOKEN_KEYRING_KEY?.trim();
  const file = env.ID_TOKEN_KEY_FILE?.trim();
  const missing = (): never => {
    throw new UsageError(
      'the keyring does not exist yet: set ID_TOKEN_KEYRING_KEY (the IdTokenKeyringKeyAlias output) to make ' +
        'it here, or let the rotation function make it',
    );
  };
  if (keyId) return new KmsKeyEncryption(kmsClient(env.AWS_REGION?.trim() ?? ''), keyId);
  if (file) return new LocalKeyEncryption(file);
  return { encrypt: missing, decrypt: missing };
}

function rotationOf(context: AdminContext): KeyRotation {
  return new KeyRotation(
    new DynamoKeyringStore(context.db, context.table('signingKeys')),
    keyEncryption(context.env),
    systemClock,
    context.local ? LOCAL_ROTATION : STAGE_ROTATION,
  );
}

/** Each key with its schedule as ISO times, and what it does now. */
function describeKeys(keys: RotationResult['keys']) {
  const now = systemClock.now().getTime();
  const signing = signingEntry(keys, now)?.kid;
  const published = new Set(publishedEntries(keys, now).map((key) => key.kid));
  return keys.map((key) => ({
    kid: key.kid,
    state:
      key.kid === signing
        ? 'signing'
        : published.has(key.kid)
          ? key.signsFrom > now
            ? 'next'
            : 'previous'
          : 'retired',
    publishedFrom: new Date(key.createdAt).toISOString(),
    signsFrom: new Date(key.signsFrom).toISOString(),
    retiresAt: key.retiresAt === undefined ? null : new Date(key.retiresAt).toISOString(),
  }));
}

export const KEY_COMMANDS: AdminCommand[] = [
  {
    name: 'list-signing-keys',
    options: [],
    usage: [
      'list-signing-keys   the ID token keyring: each key, what it does now, its schedule (public parts only)',
    ],
    run: async (context) => {
      const keyring = await new DynamoKeyringStore(context.db, context.table('signingKeys')).readPublic();
      return { keys: describeKeys(keyring?.keys ?? []) };
    },
  },
  {
    name: 'rotate-signing-key',
    options: [],
    usage: [
      'rotate-signing-key   publishes the next ID token key now; it signs after the publication lead (1 hour)',
      '             and the current key retires once its tokens have expired',
    ],
    run: async (context) => {
      const { outcome, keys } = await rotationOf(context).now();
      return { outcome, keys: describeKeys(keys) };
    },
  },
  {
    name: 'retire-signing-key',
    options: ['kid'],
    usage: [
      'retire-signing-key --kid <kid>   a compromised key, at once: out of the JWKS, and the next key signs',
      '             (every environment within a minute); tokens it signed stop verifying',
    ],
    run: async (context) => {
      const kid = context.need('kid');
      const { outcome, keys } = await rotationOf(context).retire(kid);
      if (outcome === 'unknown-key')
        throw new UsageError(`the keyring holds no key "${kid}" (list-signing-keys)`);
      return { outcome, keys: describeKeys(keys) };
    },
  },
];
