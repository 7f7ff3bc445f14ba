import { describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionName } from '#lib/definitions/routes';
import type { Json, Synthesized } from '#test/support/infra';
import { functionByDescription, resources, roleStatements, synthesize } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const synth = useSynthesized();

const keysOf = (template: Synthesized['template']) => resources(template, 'AWS::KMS::Key');
const fnOf = (template: Synthesized['template'], name: FunctionName): Json =>
  functionByDescription(template, FUNCTIONS[name].description)[1];

/** Every `kms:*` grant of a function's role, as `action on key logical id`. */
function kmsGrants(template: Synthesized['template'], name: FunctionName): string[] {
  const role = fnOf(template, name).Properties.Role['Fn::GetAtt'][0];
  return roleStatements(template, role)
    .filter((statement) => [statement.Action].flat().some((action: string) => action.startsWith('kms:')))
    .flatMap((statement) =>
      [statement.Action]
        .flat()
        .flatMap((action: string) =>
          [statement.Resource].flat().map((resource: Json) => `${action} on ${resource['Fn::GetAtt']?.[0]}`),
        ),
    )
    .sort();
}

function keyIds(template: Synthesized['template']) {
  const keys = keysOf(template);
  const find = (spec: string) => Object.keys(keys).filter((id) => keys[id].Properties.KeySpec === spec);
  // The other HMAC key is webhook delivery's (infra/constructs/webhooks.ts).
  const hmac = find('HMAC_256');
  return {
    signing: find('ECC_NIST_P256'),
    subject: hmac.filter((id) => id.startsWith('IdTokenKeys')),
    webhook: hmac.filter((id) => id.startsWith('Webhooks')),
  };
}

describe('ID token keys in KMS', () => {
  it('creates one asymmetric P-256 signing key and one HMAC key (and webhook secrets one), retained with the stack', () => {
    const keys = keysOf(synth.template);
    const { webhook } = keyIds(synth.template);
    expect(webhook).toHaveLength(1);
    expect(
      Object.entries(keys)
        .filter(([id]) => !webhook.includes(id))
        .map(([, key]) => [key.Properties.KeySpec, key.Properties.KeyUsage])
        .sort(),
    ).toEqual([
      ['ECC_NIST_P256', 'SIGN_VERIFY'],
      ['HMAC_256', 'GENERATE_VERIFY_MAC'],
    ]);
    for (const key of Object.values(keys)) {
      expect(key.DeletionPolicy).toBe('Retain');
      expect(key.UpdateReplacePolicy).toBe('Retain');
    }
  });

  it('names the signing key by an alias of the stack', () => {
    const aliases = Object.values(resources(synth.template, 'AWS::KMS::Alias'));
    const { signing } = keyIds(synth.template);
    const signingAlias = aliases.find(
      (alias) => alias.Properties.TargetKeyId['Fn::GetAtt'][0] === signing[0],
    );
    expect(signingAlias?.Properties.AliasName).toMatch(/^alias\/.+\/id-token-signing$/);
  });

  it('lets only the embed page sign and derive subjects, each on its own key', () => {
    const { signing, subject } = keyIds(synth.template);
    expect(kmsGrants(synth.template, 'embedPage')).toEqual(
      [`kms:GenerateMac on ${subject[0]}`, `kms:Sign on ${signing[0]}`].sort(),
    );
  });

  it('lets only the discovery function read public keys, and nothing else of KMS', () => {
    const { signing } = keyIds(synth.template);
    expect(kmsGrants(synth.template, 'discovery')).toEqual([`kms:GetPublicKey on ${signing[0]}`]);
  });

  it('grants no other function any KMS action but GenerateMac on the webhook secret key to create-webhook and rotate-webhook-secret', () => {
    const { webhook } = keyIds(synth.template);
    for (const name of Object.keys(FUNCTIONS) as FunctionName[]) {
      if (name === 'embedPage' || name === 'discovery') continue;
      expect(kmsGrants(synth.template, name), name).toEqual(
        name === 'createWebhook' || name === 'rotateWebhookSecret'
          ? [`kms:GenerateMac on ${webhook[0]}`]
          : [],
      );
    }
  });

  it('passes the keys by ARN to the two functions that use them, and to no other', () => {
    const { signing, subject } = keyIds(synth.template);
    const embed = fnOf(synth.template, 'embedPage').Properties.Environment.Variables;
    expect(embed.ID_TOKEN_SIGNING_KEY).toEqual({ 'Fn::GetAtt': [signing[0], 'Arn'] });
    expect(embed.ID_TOKEN_SUBJECT_KEY).toEqual({ 'Fn::GetAtt': [subject[0], 'Arn'] });
    expect(embed.ID_TOKEN_PUBLISHED_KEYS).toBeUndefined();
    const discovery = fnOf(synth.template, 'discovery').Properties.Environment.Variables;
    expect(JSON.stringify(discovery.ID_TOKEN_PUBLISHED_KEYS)).toContain(signing[0]);
    expect(discovery.ID_TOKEN_SIGNING_KEY).toBeUndefined();
    for (const name of Object.keys(FUNCTIONS) as FunctionName[]) {
      if (name === 'embedPage' || name === 'discovery') continue;
      const variables = fnOf(synth.template, name).Properties.Environment.Variables;
      expect(
        Object.keys(variables).filter((v) => v.startsWith('ID_TOKEN_')),
        name,
      ).toEqual([]);
    }
  });
});

describe('rotating the signing key (idTokenSigningKeys)', () => {
  it('publishes every listed key, signs with the first, and grants exactly that', () => {
    const rotating = synthesize({ context: { idTokenSigningKeys: ['2', '1'] } });
    try {
      const { signing } = keyIds(rotating.template);
      expect(signing).toHaveLength(2);
      const first = signing.find((id) => id.includes('Signing2'));
      const second = signing.find((id) => id.includes('Signing1'));
      expect(kmsGrants(rotating.template, 'discovery')).toEqual(
        [`kms:GetPublicKey on ${first}`, `kms:GetPublicKey on ${second}`].sort(),
      );
      expect(kmsGrants(rotating.template, 'embedPage')).toContain(`kms:Sign on ${first}`);
      expect(kmsGrants(rotating.template, 'embedPage')).not.toContain(`kms:Sign on ${second}`);
      const embed = fnOf(rotating.template, 'embedPage').Properties.Environment.Variables;
      expect(embed.ID_TOKEN_SIGNING_KEY).toEqual({ 'Fn::GetAtt': [first, 'Arn'] });
    } finally {
      rotating.dispose();
    }
  });

  it('keeps the first key’s logical id when a second is added, so no key is replaced', () => {
    const one = keyIds(synth.template).signing;
    const rotating = synthesize({ context: { idTokenSigningKeys: ['1', '2'] } });
    try {
      expect(keyIds(rotating.template).signing).toEqual(expect.arrayContaining(one));
    } finally {
      rotating.dispose();
    }
  });
});
