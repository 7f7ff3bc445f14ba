import { describe, expect, it } from 'vitest';
import { BACKGROUND_FUNCTIONS, type BackgroundFunctionName } from '#lib/definitions/background';
import { FUNCTIONS, type FunctionName, KEYRING_ENCRYPTION_CONTEXT } from '#lib/definitions/routes';
import type { Json, Synthesized } from '#test/support/infra';
import { functionByDescription, resources, roleStatements } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const synth = useSynthesized();

type AnyName = FunctionName | BackgroundFunctionName;
const ALL = { ...FUNCTIONS, ...BACKGROUND_FUNCTIONS };
const NAMES = Object.keys(ALL) as AnyName[];

const keysOf = (template: Synthesized['template']) => resources(template, 'AWS::KMS::Key');
const fnOf = (name: AnyName): [string, Json] => functionByDescription(synth.template, ALL[name].description);

function statementsOf(name: AnyName): Json[] {
  const role = fnOf(name)[1].Properties.Role['Fn::GetAtt'][0];
  return roleStatements(synth.template, role);
}

/** Every `kms:*` grant of a function's role, as `action on key logical id`. */
function kmsGrants(name: AnyName): string[] {
  return statementsOf(name)
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

function keyringKeyId(): string {
  const ids = Object.keys(keysOf(synth.template)).filter((id) => id.startsWith('IdTokenKeysKeyring'));
  expect(ids).toHaveLength(1);
  return ids[0] as string;
}

function signingKeysTableId(): string {
  const ids = Object.keys(resources(synth.template, 'AWS::DynamoDB::Table')).filter((id) =>
    id.includes('SigningKeys'),
  );
  expect(ids).toHaveLength(1);
  return ids[0] as string;
}

/** The DynamoDB actions a function's role holds on the signing keys table. */
function keyringTableActions(name: AnyName): string[] {
  const table = signingKeysTableId();
  return statementsOf(name)
    .filter((statement) => JSON.stringify(statement.Resource).includes(table))
    .flatMap((statement) => [statement.Action].flat())
    .sort();
}

describe('the ID token keyring’s KMS key', () => {
  it('is one symmetric encryption key with KMS’s yearly rotation, retained with the stack, and no signing or MAC key of its own', () => {
    const keys = keysOf(synth.template);
    const key = keys[keyringKeyId()];
    expect(key.Properties).toMatchObject({ KeySpec: 'SYMMETRIC_DEFAULT', KeyUsage: 'ENCRYPT_DECRYPT' });
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.UpdateReplacePolicy).toBe('Retain');
    // No asymmetric key signs in KMS any more; the one other key derives webhook secrets.
    const others = Object.entries(keys).filter(([id]) => id !== keyringKeyId());
    expect(others.map(([id, other]) => [id.startsWith('Webhooks'), other.Properties.KeySpec])).toEqual([
      [true, 'HMAC_256'],
    ]);
  });

  it('is named by an alias of the stack', () => {
    const aliases = Object.values(resources(synth.template, 'AWS::KMS::Alias'));
    const alias = aliases.find((a) => a.Properties.TargetKeyId['Fn::GetAtt'][0] === keyringKeyId());
    expect(alias?.Properties.AliasName).toMatch(/^alias\/.+\/id-token-keyring$/);
  });

  it('lets only the two functions that sign decrypt, only under the keyring’s encryption context', () => {
    const key = keyringKeyId();
    const decrypting = NAMES.filter((name) => kmsGrants(name).includes(`kms:Decrypt on ${key}`)).sort();
    expect(decrypting).toEqual(['embedPage', 'webhookDelivery']);
    for (const name of decrypting) {
      const statement = statementsOf(name).find((s) => [s.Action].flat().includes('kms:Decrypt'));
      expect(statement?.Condition).toEqual({
        StringEquals: { 'kms:EncryptionContext:purpose': KEYRING_ENCRYPTION_CONTEXT.purpose },
      });
    }
    expect(kmsGrants('embedPage')).toEqual([`kms:Decrypt on ${key}`]);
  });

  it('lets the rotation encrypt only (to make the keyring), and never decrypt', () => {
    expect(kmsGrants('keyRotation')).toEqual([`kms:Encrypt on ${keyringKeyId()}`]);
    expect(keyringTableActions('keyRotation')).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
  });

  it('gives discovery no KMS permission at all: it reads the keyring’s public halves from the table', () => {
    expect(kmsGrants('discovery')).toEqual([]);
    expect(keyringTableActions('discovery')).toEqual(['dynamodb:GetItem']);
  });

  it('lets no other function touch the keyring or its key', () => {
    const readers = ['embedPage', 'webhookDelivery', 'discovery', 'keyRotation'];
    for (const name of NAMES.filter((n) => !readers.includes(n))) {
      expect(keyringTableActions(name), name).toEqual([]);
      expect(
        kmsGrants(name).filter((grant) => grant.endsWith(keyringKeyId())),
        name,
      ).toEqual([]);
    }
  });

  it('passes the keyring key by ARN to the functions that use it, and to no other', () => {
    const users = ['embedPage', 'webhookDelivery', 'keyRotation'];
    for (const name of NAMES) {
      const variables = fnOf(name)[1].Properties.Environment.Variables ?? {};
      expect(
        Object.keys(variables).filter((v) => v.startsWith('ID_TOKEN_')),
        name,
      ).toEqual(users.includes(name) ? ['ID_TOKEN_KEYRING_KEY'] : []);
      if (users.includes(name))
        expect(variables.ID_TOKEN_KEYRING_KEY).toEqual({ 'Fn::GetAtt': [keyringKeyId(), 'Arn'] });
    }
  });
});

describe('the keyring rotation schedule', () => {
  it('runs the rotation function every ten minutes on an EventBridge schedule, retried twice', () => {
    const rotation = fnOf('keyRotation')[0];
    const rules = Object.values(resources(synth.template, 'AWS::Events::Rule'))
      .map((rule) => (rule as Json).Properties)
      .filter((rule) => rule.Targets.some((t: Json) => t.Arn['Fn::GetAtt']?.[0] === rotation));
    expect(rules).toHaveLength(1);
    expect(rules[0].ScheduleExpression).toBe('rate(10 minutes)');
    expect(rules[0].Targets[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 2 });
  });
});
