import { RemovalPolicy } from 'aws-cdk-lib';
import { Alias, type IKey, Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface IdTokenKeysProps {
  /**
   * The names of the signing keys, from the `idTokenSigningKeys` context key: the first signs, every one is
   * published in the JWKS. A rotation adds a name, moves it first, then drops the old one (docs/operations.md).
   */
  signingKeyNames: readonly string[];
  /** Prefix of the aliases (the stack's name), so stages in one account do not collide. */
  aliasPrefix: string;
}

/**
 * The keys behind the ID tokens handed to board applications. Their private halves never leave KMS:
 * asymmetric `ECC_NIST_P256` `SIGN_VERIFY` keys sign (ES256), and one `HMAC_256` key derives pairwise
 * subjects. Retained on stack deletion: a key deleted too early breaks every token it signed, and a lost
 * subject key would change every user's `sub`.
 */
export class IdTokenKeys extends Construct {
  /** Every signing key, in the order of the context key; the first signs. */
  readonly signingKeys: readonly IKey[];
  readonly subjectKey: IKey;
  readonly signingAlias: Alias;

  constructor(scope: Construct, id: string, props: IdTokenKeysProps) {
    super(scope, id);
    this.signingKeys = props.signingKeyNames.map(
      (name) =>
        new Key(this, `Signing${name}`, {
          description: `Signs the ID tokens handed to board applications (ES256), key "${name}"`,
          keySpec: KeySpec.ECC_NIST_P256,
          keyUsage: KeyUsage.SIGN_VERIFY,
          removalPolicy: RemovalPolicy.RETAIN,
        }),
    );
    this.subjectKey = new Key(this, 'Subject', {
      description: 'Derives the pairwise subjects (sub) of the ID tokens handed to board applications',
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.signingAlias = new Alias(this, 'SigningAlias', {
      aliasName: `alias/${props.aliasPrefix}/id-token-signing`,
      targetKey: this.signingKey,
    });
    new Alias(this, 'SubjectAlias', {
      aliasName: `alias/${props.aliasPrefix}/id-token-subject`,
      targetKey: this.subjectKey,
    });
  }

  /** The key that signs now. */
  get signingKey(): IKey {
    const [first] = this.signingKeys;
    if (!first) throw new Error('idTokenSigningKeys must name at least one key');
    return first;
  }
}
