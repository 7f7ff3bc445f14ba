import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { constructId } from '#infra/constructs/data';
import { FUNCTIONS, type FunctionSetting } from '#lib/definitions/routes';
import { TABLE_KEYS, TABLES } from '#lib/definitions/tables';
import type { Json, Synthesized } from '#test/support/infra';
import { functionByDescription, resources, synthesize, tableLogicalIds } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1234-5678-9abc-def012345678';

const synth = useSynthesized();
let outputs: Record<string, Json>;

beforeAll(() => {
  outputs = synth.template.toJSON().Outputs;
});

/** The environment of each function, by function name. */
const functionVariables = (template: Synthesized['template']): Record<string, Json> =>
  Object.fromEntries(
    Object.entries(FUNCTIONS).map(([name, definition]) => [
      name,
      functionByDescription(template, definition.description)[1].Properties.Environment.Variables,
    ]),
  );

/** Expects `setting` = `value` on exactly the functions whose definition names the setting. */
function expectSetting(template: Synthesized['template'], setting: FunctionSetting, value: string) {
  for (const [name, variables] of Object.entries(functionVariables(template))) {
    const reads = (FUNCTIONS[name as keyof typeof FUNCTIONS].settings as readonly string[]).includes(setting);
    expect(variables[setting], name).toBe(reads ? value : undefined);
  }
}

describe('stack outputs', () => {
  it('outputs the stage URL of the API', () => {
    const parts: Json[] = outputs.ApiUrl.Value['Fn::Join'][1];
    expect(parts[0]).toBe('https://');
    expect(parts.at(-1)).toBe('/');
    expect(JSON.stringify(parts)).toContain('.execute-api.');
  });

  it('outputs the embed base URL under the stage URL', () => {
    const api: Json[] = outputs.ApiUrl.Value['Fn::Join'][1];
    const embed: Json[] = outputs.EmbedBaseUrl.Value['Fn::Join'][1];
    expect(embed.slice(0, -1)).toEqual(api.slice(0, -1));
    expect(embed.at(-1)).toBe('/embed');
  });

  it.each(TABLE_KEYS)('outputs the %s table name for the admin CLI', (key) => {
    const output = outputs[`${constructId(key)}TableName`];
    expect(output.Value).toEqual({ Ref: tableLogicalIds(synth.template)[key] });
    expect(output.Description).toContain(TABLES[key].envVar);
  });

  it('outputs the region and the alarm topic', () => {
    expect(outputs.Region.Value).toEqual({ Ref: 'AWS::Region' });
    expect(outputs.AlarmTopicArn.Value.Ref).toEqual(expect.any(String));
  });

  it('outputs the default usage plan’s id for the admin CLI (USAGE_PLAN_ID)', () => {
    const [planId] = Object.keys(resources(synth.template, 'AWS::ApiGateway::UsagePlan'));
    expect(outputs.UsagePlanId.Value).toEqual({ Ref: planId });
    expect(outputs.UsagePlanId.Description).toContain('USAGE_PLAN_ID');
  });

  it('outputs nothing else (no duplicate endpoint output, no custom domain target)', () => {
    const expected = [
      'ApiUrl',
      'EmbedBaseUrl',
      'Region',
      'AlarmTopicArn',
      'UsagePlanId',
      'ProvisioningCallerPolicyArn',
      'IdTokenKeyringKeyAlias',
      'EventBusName',
      'CutoffRecordCopies',
      'WebhookDeadLetterQueueUrl',
      'StreamFailureQueueUrl',
      ...TABLE_KEYS.map((k) => `${constructId(k)}TableName`),
    ];
    expect(Object.keys(outputs).sort()).toEqual(expected.sort());
  });
});

describe('docs/operations.md', () => {
  const operations = readFileSync(join(import.meta.dirname, '../../docs/operations.md'), 'utf8');

  it('names every output of the stack, and the custom domain target', () => {
    const names = [...Object.keys(outputs), 'CustomDomainTarget'];
    expect(names.filter((name) => !operations.includes(`\`${name}\``))).toEqual([]);
  });

  it("names every table's variable among the functions' configuration", () => {
    const variables = TABLE_KEYS.map((key) => TABLES[key].envVar);
    expect(variables.filter((name) => !new RegExp(`^\\| \`${name}\``, 'm').test(operations))).toEqual([]);
  });
});

describe('public base URL', () => {
  it('points embed links at publicBaseUrl: the output, and PUBLIC_BASE_URL of the functions that read it (links, token issuer)', () => {
    const override = synthesize({ context: { publicBaseUrl: 'https://boards.example.com/' } });
    try {
      expect(override.template.toJSON().Outputs.EmbedBaseUrl.Value).toBe('https://boards.example.com/embed');
      expectSetting(override.template, 'PUBLIC_BASE_URL', 'https://boards.example.com');
      expect(functionVariables(override.template).createSession.PUBLIC_BASE_URL).toBe(
        'https://boards.example.com',
      );
    } finally {
      override.dispose();
    }
  });

  it('serves a custom domain with a TLS 1.2 regional endpoint and uses it as the public base URL', () => {
    const override = synthesize({
      context: { customDomainName: 'api.example.com', certificateArn: CERTIFICATE_ARN },
    });
    try {
      override.template.hasResourceProperties('AWS::ApiGateway::DomainName', {
        DomainName: 'api.example.com',
        RegionalCertificateArn: CERTIFICATE_ARN,
        EndpointConfiguration: { Types: ['REGIONAL'] },
        SecurityPolicy: 'TLS_1_2',
      });
      override.template.resourceCountIs('AWS::ApiGateway::BasePathMapping', 1);
      const out = override.template.toJSON().Outputs;
      expect(out.EmbedBaseUrl.Value).toBe('https://api.example.com/embed');
      expect(out.CustomDomainTarget.Value).toEqual({
        'Fn::GetAtt': [expect.any(String), 'RegionalDomainName'],
      });
      expectSetting(override.template, 'PUBLIC_BASE_URL', 'https://api.example.com');
    } finally {
      override.dispose();
    }
  });
});

describe('embed origins', () => {
  it('sets no EMBED_FRAME_ANCESTORS by default, leaving the embed page its own default', () => {
    for (const v of Object.values(functionVariables(synth.template))) {
      expect(v.EMBED_FRAME_ANCESTORS).toBeUndefined();
    }
  });

  it('passes allowedEmbedOrigins to the embed page, and only to it, as EMBED_FRAME_ANCESTORS', () => {
    const override = synthesize({
      context: { allowedEmbedOrigins: 'https://app.example.com, https://admin.example.com' },
    });
    try {
      expectSetting(
        override.template,
        'EMBED_FRAME_ANCESTORS',
        'https://app.example.com https://admin.example.com',
      );
      expect(functionVariables(override.template).embedPage.EMBED_FRAME_ANCESTORS).toBe(
        'https://app.example.com https://admin.example.com',
      );
    } finally {
      override.dispose();
    }
  });
});

describe('board application', () => {
  it('sets no BOARD_APP_URL by default, so boards without their own keep the built-in page', () => {
    for (const v of Object.values(functionVariables(synth.template))) expect(v.BOARD_APP_URL).toBeUndefined();
  });

  it('passes boardAppUrl to the embed page, and only to it, as BOARD_APP_URL', () => {
    const override = synthesize({ context: { boardAppUrl: 'https://board.example.com/app' } });
    try {
      expectSetting(override.template, 'BOARD_APP_URL', 'https://board.example.com/app');
      expect(functionVariables(override.template).embedPage.BOARD_APP_URL).toBe(
        'https://board.example.com/app',
      );
    } finally {
      override.dispose();
    }
  });
});
