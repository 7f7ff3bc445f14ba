import { afterAll, describe, expect, it } from 'vitest';
import { runAdmin } from '#admin/cli';
import { UsageError } from '#admin/command';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoKeyringStore } from '#lib/adapters/dynamodb/keyring';
import { KeyringPublicKeys } from '#lib/adapters/signing/keyring-keys';
import { systemClock } from '#lib/platform/system';
import { adminEnv, testTarget } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

/** The admin CLI's signing key commands against the local runtime's keyring. */
const runtime = useTestRuntime();
const db = () => createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
let client: ReturnType<typeof db> | undefined;
afterAll(() => client?.destroy());

type Listed = { kid: string; state: string; retiresAt: string | null }[];
const admin = (...args: string[]) =>
  runAdmin(args, adminEnv(runtime)) as Promise<{ outcome?: string; keys: Listed }>;

/** The kids a fresh discovery reader publishes now. */
async function publishedKids(): Promise<string[]> {
  client ??= db();
  const store = new DynamoKeyringStore(client, runtime.tables.signingKeys);
  return (await new KeyringPublicKeys(store, systemClock).publicKeys()).map((key) => key.kid);
}

describe.skipIf(testTarget() === 'assembly')('admin signing key commands', () => {
  it('lists the keyring the runtime made at start: one key, signing, published', async () => {
    const { keys } = await admin('list-signing-keys');
    expect(keys).toEqual([expect.objectContaining({ state: 'signing', retiresAt: null })]);
    expect(await publishedKids()).toEqual([keys[0]?.kid]);
  });

  it('rotates at once: the next key is published now and signs later; the current retires after', async () => {
    const { keys: before } = await admin('list-signing-keys');
    const rotated = await admin('rotate-signing-key');
    expect(rotated.outcome).toBe('scheduled');
    expect(rotated.keys.map((key) => key.state)).toEqual(['signing', 'next']);
    expect(rotated.keys[0]).toMatchObject({ kid: before[0]?.kid, retiresAt: expect.any(String) });
    expect((await publishedKids()).sort()).toEqual(rotated.keys.map((key) => key.kid).sort());
    // Asked again while a next key waits, it schedules nothing more.
    expect((await admin('rotate-signing-key')).outcome).toBe('already-scheduled');
  });

  it('retires a compromised key at once: out of the JWKS, and the waiting key signs', async () => {
    const { keys } = await admin('list-signing-keys');
    const [current, next] = keys;
    const retired = await admin('retire-signing-key', '--kid', current?.kid ?? '');
    expect(retired.outcome).toBe('retired');
    expect(retired.keys).toEqual([expect.objectContaining({ kid: next?.kid, state: 'signing' })]);
    expect(await publishedKids()).toEqual([next?.kid]);
  });

  it('refuses to retire a key the keyring does not hold', async () => {
    await expect(admin('retire-signing-key', '--kid', 'no-such-key')).rejects.toThrow(UsageError);
    await expect(admin('retire-signing-key')).rejects.toThrow('--kid');
  });
});
