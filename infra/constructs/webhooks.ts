import { RemovalPolicy } from 'aws-cdk-lib';
import { Alias, type IKey, Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface WebhooksProps {
  /** Prefix of the aliases (the stack's name), so stages in one account do not collide. */
  aliasPrefix: string;
}

/**
 * Webhook delivery's resources. The secret key is a KMS `HMAC_256` key: every endpoint's signing secret
 * is `whsec_` + base64(GenerateMac(key, endpoint id)), so no secret exists at rest anywhere. Retained on
 * stack deletion: a lost key would change every endpoint's secret, and receivers would refuse everything.
 */
export class Webhooks extends Construct {
  readonly secretKey: IKey;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    this.secretKey = new Key(this, 'SecretKey', {
      description: 'Derives the signing secrets of webhook endpoints (GenerateMac over the endpoint id)',
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new Alias(this, 'SecretKeyAlias', {
      aliasName: `alias/${props.aliasPrefix}/webhook-secrets`,
      targetKey: this.secretKey,
    });
  }
}
