import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, Aws, DockerImage, Duration, type ILocalBundling, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  Alias,
  Architecture,
  Code,
  type IFunction,
  Function as LambdaFunction,
  Runtime,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { buildBundle, esbuildOptions, LAMBDA_SDK_ENVIRONMENT, shipFiles } from '#infra/bundling';
import { variablesOf } from '#lib/definitions/environment';
import {
  type FunctionDefinition,
  type FunctionSetting,
  KEYRING_ENCRYPTION_CONTEXT,
  runtimeOf,
  TABLE_ITSELF,
} from '#lib/definitions/routes';
import { TABLES, type TableKey } from '#lib/definitions/tables';

/** The repository root: function entries in lib/definitions/routes.ts are relative to it. */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

export interface ServiceFunctionProps {
  definition: FunctionDefinition;
  tables: Record<TableKey, ITable>;
  /** LOG_LEVEL, and the values of the optional settings that are configured. */
  environment: { LOG_LEVEL: string } & Partial<Record<FunctionSetting, string>>;
  logRetention: RetentionDays;
  /** The keyring's KMS key, for a function whose definition lists KMS actions; the webhook secret key. */
  keys?: { keyring: IKey; webhookSecret?: IKey };
  /** Execution environments kept initialized (an alias with provisioned concurrency); none when 0 or unset. */
  provisionedConcurrency?: number;
}

/**
 * One Lambda function with the house defaults: Node.js 24 on arm64, an ESM bundle built by esbuild in
 * this process (never Docker) with the AWS SDK inside and its settings in the environment, its own log
 * group, and a role that may perform exactly the DynamoDB actions its definition lists, on exactly those
 * tables.
 */
export class ServiceFunction extends Construct {
  readonly function: LambdaFunction;
  /** What API Gateway invokes: the alias with provisioned concurrency when there is one, else the function. */
  readonly invoked: IFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const { definition } = props;
    const accessedTables = Object.keys(definition.access) as TableKey[];

    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    // An own role instead of the default one: the default attaches AWSLambdaBasicExecutionRole, which
    // may write to every log group of the account; this one may write only to its own.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role: ${definition.description}`,
    });
    this.logGroup.grantWrite(this.role);

    // Exactly the variables the definition gives the function (lib/definitions/environment.ts), which are
    // the ones its code can see; an optional setting the stage leaves unset is left out.
    const values: Record<string, string | undefined> = { ...props.environment };
    for (const key of accessedTables) values[TABLES[key].envVar] = props.tables[key].tableName;
    const environment: Record<string, string> = { ...LAMBDA_SDK_ENVIRONMENT };
    for (const variable of variablesOf(definition)) {
      const value = values[variable];
      if (value !== undefined) environment[variable] = value;
    }

    this.function = new LambdaFunction(this, 'Function', {
      code: Code.fromAsset(PROJECT_ROOT, {
        // The asset is what esbuild wrote: its hash is the output's, so a change that leaves the bundle
        // as it was deploys nothing.
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          local: new InProcessBundling(definition),
          // CDK requires an image for the Docker fallback, which InProcessBundling never takes.
          image: DockerImage.fromRegistry(NO_DOCKER_IMAGE),
        },
      }),
      handler: 'index.handler',
      description: definition.description,
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: runtimeOf(definition).memoryMb,
      timeout: Duration.seconds(runtimeOf(definition).timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      // No NODE_OPTIONS=--enable-source-maps: it parses the map on every cold start; the logger maps the
      // stacks it writes instead (lib/platform/source-maps.ts).
      environment,
    });

    const provisioned = props.provisionedConcurrency ?? 0;
    this.invoked =
      provisioned > 0
        ? new Alias(this, 'Provisioned', {
            aliasName: 'provisioned',
            version: this.function.currentVersion,
            provisionedConcurrentExecutions: provisioned,
          })
        : this.function;

    grantKmsActions(this.role, definition, props.keys);
    if (definition.webhookSecrets) {
      const key = props.keys?.webhookSecret;
      if (!key) throw new Error(`${definition.entry} derives webhook secrets, but the stack passed no key`);
      // GenerateMac on the webhook secret key only: the function can derive secrets, never read a key.
      this.role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['kms:GenerateMac'], resources: [key.keyArn] }),
      );
    }

    if (definition.usagePlans) grantUsagePlans(this.role, definition.usagePlans);

    for (const key of accessedTables) {
      const actions = definition.access[key] ?? [];
      const itemActions = actions.filter((action) => action !== 'Query');
      if (itemActions.length > 0) {
        this.role.addToPrincipalPolicy(
          new PolicyStatement({
            actions: itemActions.map((action) => `dynamodb:${action}`),
            resources: [props.tables[key].tableArn],
          }),
        );
      }
      if (actions.includes('Query')) {
        this.role.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['dynamodb:Query'],
            resources: indexArns(props.tables[key], key, definition.queries?.[key]),
          }),
        );
      }
    }
  }
}

/**
 * What keeping the stage's usage plans in step with issued keys takes (lib/adapters/api-gateway/api-gateway-keys.ts):
 * read the usage plans to find the default one, create, find and delete API Gateway API keys, and add a
 * key to a usage plan. Revoking a key with limits of its own also retires that key's own usage plan
 * (detached from its stage, then deleted), so revocations leave no plan behind. API Gateway's control
 * plane names no finer resource for plans found by name, and draws their ids. Registering alone (the
 * authorizer, for keys issued before the stage had usage plans) needs no delete.
 */
function grantUsagePlans(role: Role, part: 'manage' | 'register'): void {
  const resource = (path: string) => `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}::${path}`;
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['apigateway:GET'],
      resources: [resource('/usageplans'), resource('/apikeys')],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['apigateway:POST'],
      resources: [resource('/apikeys'), resource('/usageplans/*/keys')],
    }),
  );
  // Only what keeps the plans in step deletes: registering a key never needs to.
  if (part === 'manage') {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['apigateway:DELETE'],
        resources: [resource('/apikeys/*'), resource('/usageplans/*')],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['apigateway:PATCH'], resources: [resource('/usageplans/*')] }),
    );
  }
  Validations.of(role).acknowledge(
    ...(part === 'manage'
      ? ['/apikeys/*', '/usageplans/*/keys', '/usageplans/*']
      : ['/usageplans/*/keys']
    ).map((path) => ({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::${path}]`,
      reason:
        'API Gateway draws the ids of API keys and usage plans, and the default usage plan is found by name at run time: ' +
        'these functions may create (and the provisioning function delete) API keys and add keys to usage plans, ' +
        'and the provisioning function retire a revoked key’s own usage plan, nothing else.',
    })),
  );
}

/**
 * Exactly the KMS actions a function's definition lists, on the keyring's key only, and only with the
 * keyring's encryption context: the key opens nothing else for these functions.
 */
function grantKmsActions(
  role: Role,
  definition: FunctionDefinition,
  keys: ServiceFunctionProps['keys'],
): void {
  const actions = definition.kms ?? [];
  if (actions.length === 0) return;
  if (!keys) throw new Error(`${definition.entry} lists KMS actions, but the stack passed no ID token keys`);
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: actions.map((action) => `kms:${action}`),
      resources: [keys.keyring.keyArn],
      conditions: {
        StringEquals: { 'kms:EncryptionContext:purpose': KEYRING_ENCRYPTION_CONTEXT.purpose },
      },
    }),
  );
}

/** The image named as the Docker fallback that bundling never takes: no such image exists. */
const NO_DOCKER_IMAGE = 'no-docker-bundling-functions-are-bundled-in-process';

/**
 * Bundles a function with esbuild's API in the synthesizing process: `esbuildOptions()` (infra/bundling.ts,
 * which the bundle tests and the benchmark build with too) into the asset folder, the entry and the
 * chunks it can load, then the files the function reads at run time beside them. It never falls back to
 * Docker: a failure throws.
 *
 * The entry is a field, not only a closure: CDK caches staged assets by their bundling options as JSON,
 * where a function is nothing, so two functions' options must differ in their data.
 */
class InProcessBundling implements ILocalBundling {
  readonly entry: string;
  readonly files: readonly string[];

  constructor(definition: FunctionDefinition) {
    this.entry = join(PROJECT_ROOT, definition.entry);
    this.files = definition.files ?? [];
  }

  tryBundle(outputDir: string): boolean {
    try {
      buildBundle({ ...esbuildOptions(this.entry, outputDir), absWorkingDir: PROJECT_ROOT });
      shipFiles({ files: this.files }, outputDir);
    } catch (error) {
      throw new Error(
        `Bundling ${this.entry} failed (esbuild, in this process; functions are never bundled in Docker): ` +
          (error instanceof Error ? error.message : String(error)),
        { cause: error },
      );
    }
    return true;
  }
}

/**
 * Query is granted on exactly what a function names in its definition (lib/definitions/routes.ts): the
 * indexes it uses, each of which must exist in lib/definitions/tables.ts, and the table itself only where
 * it names TABLE_ITSELF (revoke-all reads an organization's members by the memberships table's partition
 * key). No `index/*` wildcard, no index it does not use.
 */
function indexArns(table: ITable, key: TableKey, queried: readonly string[] | undefined): string[] {
  if (!queried || queried.length === 0) {
    throw new Error(
      `Query on the ${key} table needs the indexes it uses in the function definition's queries`,
    );
  }
  const known = new Set<string>(TABLES[key].indexes.map((index) => index.indexName));
  const unknown = queried.filter((name) => name !== TABLE_ITSELF && !known.has(name));
  if (unknown.length > 0) throw new Error(`The ${key} table has no index ${unknown.join(', ')}`);
  return queried.map((name) => (name === TABLE_ITSELF ? table.tableArn : `${table.tableArn}/index/${name}`));
}
