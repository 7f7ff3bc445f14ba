import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionDefinition } from '../../lib/routes';
import { TABLES, type TableDefinition, type TableKey } from '../../lib/tables';
import { BUNDLING } from '../bundling';

/** The repository root: function entries in lib/routes.ts are relative to it. */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;
export const FUNCTION_MEMORY_MB = 512;
export const FUNCTION_TIMEOUT = Duration.seconds(10);

export interface ServiceFunctionProps {
  definition: FunctionDefinition;
  tables: Record<TableKey, ITable>;
  /** Settings shared by every function (log level, public base URL ...). */
  environment: Record<string, string>;
  logRetention: RetentionDays;
}

/**
 * One Lambda function with the house defaults: Node.js 24 on arm64, an ESM bundle built locally by
 * esbuild (never Docker) with the AWS SDK inside, its own log group, and a role that may perform exactly
 * the DynamoDB actions its definition lists, on exactly those tables.
 */
export class ServiceFunction extends Construct {
  readonly function: NodejsFunction;
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

    const tableEnvironment: Record<string, string> = {};
    for (const key of accessedTables) tableEnvironment[TABLES[key].envVar] = props.tables[key].tableName;

    this.function = new NodejsFunction(this, 'Function', {
      entry: join(PROJECT_ROOT, definition.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      description: definition.description,
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: FUNCTION_MEMORY_MB,
      timeout: FUNCTION_TIMEOUT,
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        ...props.environment,
        ...tableEnvironment,
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        // esbuild is a dev dependency: synthesis must work offline and without a Docker daemon.
        forceDockerBundling: false,
        // The shared settings (ESM, module-first resolution, minified, source maps, SDK bundled, require
        // shim) that the bundle test and the benchmark build with too.
        format: BUNDLING.format === 'esm' ? OutputFormat.ESM : OutputFormat.CJS,
        mainFields: [...BUNDLING.mainFields],
        target: BUNDLING.target,
        minify: BUNDLING.minify,
        sourceMap: BUNDLING.sourceMap,
        externalModules: [...BUNDLING.externalModules],
        banner: BUNDLING.banner,
      },
    });

    for (const key of accessedTables) {
      const actions = definition.access[key] ?? [];
      if (actions.length === 0) continue;
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: actions.map((action) => `dynamodb:${action}`),
          resources: tableResources(props.tables[key], TABLES[key], actions.includes('Query')),
        }),
      );
    }
  }
}

/**
 * The table ARN, plus the ARN of each of its indexes when the function may Query: the indexes are
 * named in lib/tables.ts, so no `index/*` wildcard is needed.
 */
function tableResources(table: ITable, definition: TableDefinition, query: boolean): string[] {
  const resources = [table.tableArn];
  if (query) {
    for (const index of definition.indexes) resources.push(`${table.tableArn}/index/${index.indexName}`);
  }
  return resources;
}
