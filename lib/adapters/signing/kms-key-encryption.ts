import { DecryptCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';
import { KEYRING_ENCRYPTION_CONTEXT } from '#lib/definitions/routes';
import type { KeyEncryption } from '#lib/domain/ports';

/**
 * The keyring's sealing private key, encrypted by a symmetric KMS key (`SYMMETRIC_DEFAULT`): `Encrypt`
 * when the keyring is made, `Decrypt` once per signing environment.
 */
export class KmsKeyEncryption implements KeyEncryption {
  constructor(
    private readonly kms: KMSClient,
    private readonly keyArn: string,
  ) {}

  async encrypt(plaintext: Uint8Array): Promise<Uint8Array> {
    const { CiphertextBlob } = await this.kms.send(
      new EncryptCommand({
        KeyId: this.keyArn,
        Plaintext: plaintext,
        EncryptionContext: KEYRING_ENCRYPTION_CONTEXT,
      }),
    );
    if (!CiphertextBlob) throw new Error('KMS answered Encrypt without a ciphertext');
    return CiphertextBlob;
  }

  async decrypt(ciphertext: Uint8Array): Promise<Uint8Array> {
    const { Plaintext } = await this.kms.send(
      new DecryptCommand({
        // Named, so a ciphertext of another key is refused rather than decrypted by it.
        KeyId: this.keyArn,
        CiphertextBlob: ciphertext,
        EncryptionContext: KEYRING_ENCRYPTION_CONTEXT,
      }),
    );
    if (!Plaintext) throw new Error('KMS answered Decrypt without a plaintext');
    return Plaintext;
  }
}
