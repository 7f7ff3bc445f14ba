/**
 * The local runtime's stand-in for the keyring's KMS key: 32 random bytes in a 0600 file (in DATA_DIR, so
 * the keyring in the local tables stays readable across restarts), used with AES-256-GCM. The keyring
 * itself is the same as on AWS (lib/adapters/signing/keyring-keys.ts), kept in the local signing keys table.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KeyEncryption } from '#lib/domain/ports';

/** What the local key file holds: the key-encryption key (base64url). */
interface KeyFile {
  keyEncryptionKey?: string;
  /** A key file of an earlier version held a subject secret instead: its random bytes serve as the key. */
  subjectSecret?: string;
}

/** Owner read and write only: the file holds a key. */
const KEY_FILE_MODE = 0o600;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const AAD = Buffer.from('id-token-keyring', 'utf8');

/**
 * Makes the local key file unless it exists, with mode 0600 (created so, never widened afterwards; an
 * existing file is narrowed to 0600).
 */
export async function ensureLocalKeyFile(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const content: KeyFile = { keyEncryptionKey: randomBytes(32).toString('base64url') };
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

/** AES-256-GCM under the key file's key, read on first use: `iv ‖ ciphertext ‖ tag`. */
export class LocalKeyEncryption implements KeyEncryption {
  #key: Promise<Buffer> | undefined;

  constructor(private readonly path: string) {}

  async encrypt(plaintext: Uint8Array): Promise<Uint8Array> {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', await this.#read(), iv);
    cipher.setAAD(AAD);
    return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  }

  async decrypt(ciphertext: Uint8Array): Promise<Uint8Array> {
    const bytes = Buffer.from(ciphertext);
    const decipher = createDecipheriv('aes-256-gcm', await this.#read(), bytes.subarray(0, IV_BYTES));
    decipher.setAAD(AAD);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
  }

  #read(): Promise<Buffer> {
    this.#key ??= readFile(this.path, 'utf8').then((text) => {
      const file = JSON.parse(text) as KeyFile;
      if (file.keyEncryptionKey) return Buffer.from(file.keyEncryptionKey, 'base64url');
      if (file.subjectSecret)
        return Buffer.from(
          hkdfSync('sha256', Buffer.from(file.subjectSecret, 'base64url'), '', 'local-kek', 32),
        );
      throw new Error(`The local key file ${this.path} holds no key`);
    });
    // A failed read is tried again on the next use rather than remembered.
    this.#key.catch(() => {
      this.#key = undefined;
    });
    return this.#key;
  }
}
