import { RemovalPolicy } from 'aws-cdk-lib';
import { Alias, Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface IdTokenKeysProps {
  /** Prefix of the alias (the stack's name), so stages in one account do not collide. */
  aliasPrefix: string;
}

/**
 * The KMS key behind the ID token keyring (lib/domain/keyring.ts): a symmetric key that encrypts the
 * keyring's sealing private key, which seals every signing key and the pairwise-subject secret. The
 * functions that sign decrypt it once per execution environment and sign in memory; the rotation only
 * encrypts (when it makes the keyring). KMS rotates this key's own material yearly (old ciphertexts still
 * decrypt). Retained on stack deletion: without it the keyring opens no more, and every user's `sub`
 * would change with a new subject secret.
 */
export class IdTokenKeys extends Construct {
  readonly keyringKey: Key;
  readonly keyringAlias: Alias;

  constructor(scope: Construct, id: string, props: IdTokenKeysProps) {
    super(scope, id);
    this.keyringKey = new Key(this, 'Keyring', {
      description:
        'Encrypts the keyring of the keys that sign ID tokens and logout tokens for board applications',
      keySpec: KeySpec.SYMMETRIC_DEFAULT,
      keyUsage: KeyUsage.ENCRYPT_DECRYPT,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.keyringAlias = new Alias(this, 'KeyringAlias', {
      aliasName: `alias/${props.aliasPrefix}/id-token-keyring`,
      targetKey: this.keyringKey,
    });
  }
}
