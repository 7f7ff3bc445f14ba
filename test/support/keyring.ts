import { type Keyring, KeyringChangedError, type PublicKeyring } from '#lib/domain/keyring';
import type { KeyEncryption, KeyringStore } from '#lib/domain/ports';

/** The keyring in memory, counting reads; `readPublic` answers what discovery's projection would. */
export class InMemoryKeyringStore implements KeyringStore {
  keyring: Keyring | undefined;
  reads = 0;

  async read(): Promise<Keyring | undefined> {
    this.reads++;
    return this.keyring && structuredClone(this.keyring);
  }

  async readPublic(): Promise<PublicKeyring | undefined> {
    this.reads++;
    return this.keyring && structuredClone({ version: this.keyring.version, keys: this.keyring.keys });
  }

  async replace(keyring: Keyring, previousVersion: number | undefined): Promise<Keyring> {
    if (this.keyring?.version !== previousVersion) throw new KeyringChangedError();
    this.keyring = structuredClone({ ...keyring, version: (previousVersion ?? 0) + 1 });
    return structuredClone(this.keyring);
  }
}

/** A stand-in for KMS: XOR with a fixed byte (reversible, visibly not plain), counting every call. */
export class CountingKeyEncryption implements KeyEncryption {
  encrypts = 0;
  decrypts = 0;

  async encrypt(plaintext: Uint8Array): Promise<Uint8Array> {
    this.encrypts++;
    return Buffer.from(plaintext).map((byte) => byte ^ 0x5a);
  }

  async decrypt(ciphertext: Uint8Array): Promise<Uint8Array> {
    this.decrypts++;
    return Buffer.from(ciphertext).map((byte) => byte ^ 0x5a);
  }
}
