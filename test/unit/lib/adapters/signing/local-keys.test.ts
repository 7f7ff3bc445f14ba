import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureLocalKeyFile, LocalKeyEncryption } from '#lib/adapters/signing/local-keys';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'id-token-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ensureLocalKeyFile', () => {
  it('creates the key file readable by its owner only, and keeps an existing one', async () => {
    const path = join(dir, 'nested', 'keys.json');
    await ensureLocalKeyFile(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const first = await readFile(path, 'utf8');
    await ensureLocalKeyFile(path);
    expect(await readFile(path, 'utf8')).toBe(first);
  });

  it('narrows an existing key file that others could read to 0600', async () => {
    const path = join(dir, 'keys.json');
    await ensureLocalKeyFile(path);
    await chmod(path, 0o644);
    await ensureLocalKeyFile(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});

describe('LocalKeyEncryption, the local stand-in for the keyring’s KMS key', () => {
  it('decrypts what it encrypted, and nothing encrypted under another key file', async () => {
    const path = join(dir, 'keys.json');
    const other = join(dir, 'other.json');
    await ensureLocalKeyFile(path);
    await ensureLocalKeyFile(other);
    const plaintext = randomBytes(48);
    const ciphertext = await new LocalKeyEncryption(path).encrypt(plaintext);
    expect(Buffer.from(ciphertext).includes(plaintext)).toBe(false);
    expect(Buffer.from(await new LocalKeyEncryption(path).decrypt(ciphertext))).toEqual(plaintext);
    await expect(new LocalKeyEncryption(other).decrypt(ciphertext)).rejects.toThrow();
  });

  it('still opens with a key file of the earlier format (a signing key and a subject secret)', async () => {
    const path = join(dir, 'old.json');
    await writeFile(
      path,
      JSON.stringify({ signingKey: {}, subjectSecret: randomBytes(32).toString('base64url') }),
      {
        mode: 0o600,
      },
    );
    const encryption = new LocalKeyEncryption(path);
    const ciphertext = await encryption.encrypt(Buffer.from('sealing key'));
    expect(Buffer.from(await new LocalKeyEncryption(path).decrypt(ciphertext)).toString()).toBe(
      'sealing key',
    );
  });
});
