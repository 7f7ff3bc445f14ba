import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readInfraConfig } from '#infra/config';
import { PROJECT_ROOT } from '#infra/constructs/service-function';
import type { ServiceDefinitions } from '#infra/definitions';
import { EmbedSessionStack } from '#infra/stack';
import { type FunctionDefinition, TABLE_ITSELF } from '#lib/definitions/routes';
import { TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';

/** The context of cdk.json (defaults and feature flags), so tests synthesize what `cdk synth` does. */
export const CDK_JSON_CONTEXT: Record<string, unknown> = JSON.parse(
  readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8'),
).context;

export interface SynthOptions {
  /** Context on top of cdk.json's. */
  context?: Record<string, unknown>;
  /**
   * Run esbuild for real (seconds). Off, CDK skips bundling and the template is identical but for the
   * asset hashes; only the tests about the bundles themselves need it on.
   */
  bundle?: boolean;
  definitions?: ServiceDefinitions;
}

export interface Synthesized {
  app: App;
  stack: EmbedSessionStack;
  template: Template;
  outdir: string;
  /** Removes the cloud assembly directory. */
  dispose(): void;
}

/** Synthesizes the stack into a temporary directory; call once per test file (`beforeAll`). */
export function synthesize(options: SynthOptions = {}): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'embed-infra-'));
  const app = new App({
    outdir,
    // CDK's own CloudFormation validation costs half a second a synthesis, two on a process's first. It
    // runs where `cdk synth` runs it, on the app itself (test/infra/app.test.ts), not on each test's copy.
    builtinCloudFormationValidation: false,
    context: {
      ...CDK_JSON_CONTEXT,
      // As the CLI does: functions record where their bundled asset was staged.
      'aws:cdk:enable-asset-metadata': true,
      ...options.context,
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const config = readInfraConfig((key) => app.node.tryGetContext(key));
  const stack = new EmbedSessionStack(app, 'Test', { config, definitions: options.definitions });
  const template = Template.fromStack(stack);
  return { app, stack, template, outdir, dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is untyped.
export type Json = any;

/** Resources of one type, by logical id. */
export function resources(template: Template, type: string): Record<string, Json> {
  return template.findResources(type);
}

/** The logical id of each table, recognised by its key schema from lib/definitions/tables.ts. */
export function tableLogicalIds(template: Template): Record<TableKey, string> {
  const tables = Object.entries(resources(template, 'AWS::DynamoDB::Table'));
  const ids = {} as Record<TableKey, string>;
  for (const key of TABLE_KEYS) {
    const definition = TABLES[key];
    const expected = [
      definition.partitionKey.name,
      'sortKey' in definition ? definition.sortKey.name : undefined,
    ];
    const matches = tables.filter(([, table]) => {
      const schema: { AttributeName: string; KeyType: string }[] = table.Properties.KeySchema;
      const hash = schema.find((k) => k.KeyType === 'HASH')?.AttributeName;
      const range = schema.find((k) => k.KeyType === 'RANGE')?.AttributeName;
      return hash === expected[0] && range === expected[1];
    });
    if (matches.length !== 1) throw new Error(`Expected one table for ${key}, found ${matches.length}`);
    ids[key] = (matches[0] as [string, Json])[0];
  }
  return ids;
}

/** The Lambda function with the given description (descriptions are unique in lib/definitions/routes.ts). */
export function functionByDescription(template: Template, description: string): [string, Json] {
  const matches = Object.entries(resources(template, 'AWS::Lambda::Function')).filter(
    ([, fn]) => fn.Properties.Description === description,
  );
  if (matches.length !== 1)
    throw new Error(`Expected one function "${description}", found ${matches.length}`);
  return matches[0] as [string, Json];
}

/** Every statement of every policy attached to the role. */
export function roleStatements(template: Template, roleLogicalId: string): Json[] {
  return Object.values(resources(template, 'AWS::IAM::Policy'))
    .filter((policy) => policy.Properties.Roles.some((role: Json) => role.Ref === roleLogicalId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

/**
 * The DynamoDB permissions in the statements as sorted `Action on table[/index/name]` strings, with the
 * table logical ids translated back to table keys.
 */
export function dynamoGrants(statements: Json[], tableIds: Record<TableKey, string>): string[] {
  const keyOf = Object.fromEntries(Object.entries(tableIds).map(([key, id]) => [id, key]));
  const describe = (resource: Json): string => {
    const getAtt = resource['Fn::GetAtt'];
    if (getAtt && getAtt[1] === 'Arn') return keyOf[getAtt[0]] ?? JSON.stringify(resource);
    const join = resource['Fn::Join'];
    if (join && join[0] === '' && join[1].length === 2 && join[1][0]['Fn::GetAtt']) {
      return `${describe(join[1][0])}${join[1][1]}`;
    }
    return JSON.stringify(resource);
  };
  const grants: string[] = [];
  for (const statement of statements) {
    const actions: string[] = [statement.Action].flat();
    const targets: Json[] = [statement.Resource].flat();
    if (statement.Effect !== 'Allow') throw new Error('unexpected Deny statement');
    for (const action of actions.filter((a) => a.startsWith('dynamodb:'))) {
      for (const target of targets) grants.push(`${action.slice('dynamodb:'.length)} on ${describe(target)}`);
    }
  }
  return grants.sort();
}

/**
 * The DynamoDB permissions a function definition (lib/definitions/routes.ts) allows, as `dynamoGrants`
 * spells them: each item action on its table, Query on the indexes it names (and on the table itself
 * where it names TABLE_ITSELF).
 */
export function allowedDynamoGrants(definition: FunctionDefinition): string[] {
  const grants: string[] = [];
  for (const [key, actions] of Object.entries(definition.access) as [TableKey, readonly string[]][]) {
    for (const action of actions) {
      if (action !== 'Query') grants.push(`${action} on ${key}`);
      else
        for (const index of definition.queries?.[key] ?? [])
          grants.push(index === TABLE_ITSELF ? `Query on ${key}` : `Query on ${key}/index/${index}`);
    }
  }
  return grants.sort();
}

/** API Gateway methods keyed by `METHOD /full/path`, rebuilt from the resource tree. */
export function methodsByRoute(template: Template): Record<string, Json> {
  const apiResources = resources(template, 'AWS::ApiGateway::Resource');
  const pathOf = (resourceId: Json): string => {
    if (resourceId['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const resource = apiResources[resourceId.Ref];
    if (!resource) throw new Error(`Unknown API resource ${JSON.stringify(resourceId)}`);
    return `${pathOf(resource.Properties.ParentId)}/${resource.Properties.PathPart}`;
  };
  const methods: Record<string, Json> = {};
  for (const method of Object.values(resources(template, 'AWS::ApiGateway::Method'))) {
    methods[`${method.Properties.HttpMethod} ${pathOf(method.Properties.ResourceId) || '/'}`] = method;
  }
  return methods;
}
