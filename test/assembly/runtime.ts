/**
 * The assembly runner: serves the REST API of a synthesized cloud assembly (`cdk.out`) from that folder
 * alone. The shared emulator of API Gateway (local/gateway.ts) serves the template's methods, authorizer,
 * gateway responses and usage plan; each method invokes its function's asset on Node 24 with exactly the
 * environment the template sets; DynamoDB is AWS's DynamoDB Local with the template's own tables, behind a
 * proxy that checks every call against the calling function's IAM statements.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';
import type { RateLimit } from '#lib/domain/api-key';
import { PUBLIC_DESTINATIONS } from '#lib/domain/destinations';
import { createLogger, type Logger } from '#lib/platform/logger';
import { createApiGateway, policyAllows } from '#local/gateway';
import type { LocalRuntime } from '#local/runtime';
import { type DemoData, seedDemoData } from '#local/seed';
import { startDynamoDbLocal } from '#test/support/dynamodb-local';
import { type DynamoRecorder, type Principal, startDynamoRecorder } from './dynamodb-recorder';
import { unusedGrants } from './iam';
import { InvocationError, LambdaFunctionPool } from './lambda';
import {
  type AssemblyFunction,
  assemblyApi,
  assemblyFunctions,
  assemblyTables,
  type CloudAssembly,
  Resolver,
  readCloudAssembly,
  roleStatements,
} from './template';

export interface AssemblyRuntimeOptions {
  /** The cloud assembly folder (`cdk synth --output`). */
  dir: string;
  /** Node 24, to run the functions' assets on. */
  node: string;
  /** A DynamoDB to create the tables in; else a DynamoDB Local of its own, closed with the runtime. */
  dynamoEndpoint?: string;
  /** Change the template before it is served (a test's deliberately broken copy). */
  editTemplate?: (template: CloudAssembly['template']) => void;
  logger?: Logger;
}

/** What the run observed of IAM: each call and its decision, and the grants no call used. */
export interface IamReport {
  calls: DynamoRecorder['calls'];
  denied: DynamoRecorder['calls'];
  /** By function name: DynamoDB grants of its role that no call of this run used. */
  unused: Record<string, string[]>;
}

export interface AssemblyRuntime extends LocalRuntime {
  /** What links the functions build start with: `https://{domainName}/{stage}`, as behind API Gateway. */
  publicBaseUrl: string;
  /** The functions, by logical id. */
  functions: Record<string, AssemblyFunction>;
  /** Each method's function (logical id) by `METHOD path`. */
  methods: Record<string, string>;
  /** Each method (`METHOD path`, as in `methods`) whose function a request reached. */
  routesCalled: Set<string>;
  /** The errors functions failed with (init errors included), in order. */
  invocationErrors: { function: string; errorType: string; message: string; init: boolean }[];
  iam(): IamReport;
  /** The last lines a function logged. */
  output(logicalId: string): string[];
}

/**
 * The environment of one function's process: the variables the template sets, what Lambda's runtime sets
 * itself (region, name, memory, and credentials: fake ones, set on purpose), and, when given,
 * DYNAMODB_ENDPOINT, which stands in for the regional endpoint's DNS (its own endpoint per function, so the
 * DynamoDB proxy knows the caller). Nothing of this process's environment.
 */
export function functionEnvironment(
  fn: AssemblyFunction,
  region: string,
  dynamoEndpoint?: string,
): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    LAMBDA_TASK_ROOT: fn.codeDir,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_ACCESS_KEY_ID: 'ASIAASSEMBLYRUNNERFAKE',
    AWS_SECRET_ACCESS_KEY: 'assembly-runner-fake-secret',
    AWS_SESSION_TOKEN: 'assembly-runner-fake-session-token',
    ASSEMBLY_FUNCTION_ARN: fn.arn,
    ...fn.environment,
    ...(dynamoEndpoint ? { DYNAMODB_ENDPOINT: dynamoEndpoint } : {}),
  };
}

async function createTables(endpoint: string, tables: ReturnType<typeof assemblyTables>): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    for (const table of tables) {
      await client.send(new CreateTableCommand(table.createTable));
      if (table.ttlAttribute) {
        await client.send(
          new UpdateTimeToLiveCommand({
            TableName: table.name,
            TimeToLiveSpecification: { Enabled: true, AttributeName: table.ttlAttribute },
          }),
        );
      }
    }
  } finally {
    client.destroy();
  }
}

/** Starts the assembly runner on a free port. */
export async function startAssemblyRuntime(options: AssemblyRuntimeOptions): Promise<AssemblyRuntime> {
  const assembly = readCloudAssembly(options.dir);
  options.editTemplate?.(assembly.template);
  const resolver = new Resolver(assembly);
  const { region, accountId, partition } = resolver.env;
  const logger = options.logger ?? createLogger({ component: 'assembly-gateway' }, { level: 'error' });
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
  };
  try {
    const own = options.dynamoEndpoint ? undefined : await startDynamoDbLocal();
    if (own) closers.push(() => own.close());
    const dynamoEndpoint = options.dynamoEndpoint ?? (own?.endpoint as string);

    const tables = assemblyTables(assembly, resolver);
    await createTables(dynamoEndpoint, tables);

    const functions = assemblyFunctions(assembly, resolver);
    const principals = new Map<string, Principal>();
    const statements = new Map<string, unknown[]>();
    for (const fn of functions) {
      if (fn.runtime !== 'nodejs24.x') throw new Error(`${fn.logicalId} runs ${fn.runtime}, not nodejs24.x`);
      const own = roleStatements(assembly, resolver, fn.roleLogicalId);
      statements.set(fn.logicalId, own);
      principals.set(fn.logicalId, { function: fn.name, statements: own });
    }
    const recorder = await startDynamoRecorder({
      target: dynamoEndpoint,
      principals,
      tableArn: (name) => `arn:${partition}:dynamodb:${region}:${accountId}:table/${name}`,
    });
    closers.push(() => recorder.close());

    const pools = new Map(
      functions.map((fn) => [
        fn.logicalId,
        new LambdaFunctionPool(
          fn,
          options.node,
          functionEnvironment(fn, region, recorder.endpoints.get(fn.logicalId) as string),
        ),
      ]),
    );
    closers.push(async () => {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
    });
    const invocationErrors: AssemblyRuntime['invocationErrors'] = [];
    const routesCalled = new Set<string>();

    const { model: templateModel, methods, invokePolicy } = assemblyApi(assembly, resolver);
    // The operator's backend: a principal the stack's ProvisioningCallerPolicy is attached to, signing
    // with credentials of its own (what API Gateway's AWS_IAM authorization checks, emulated).
    const provisioning = {
      accessKeyId: 'AKIAASSEMBLYBACKEND0',
      secretAccessKey: randomBytes(30).toString('base64url'),
      region,
      principalArn: `arn:${partition}:iam::${accountId}:user/provisioning-backend`,
    };
    const model = {
      ...templateModel,
      iam: {
        credentials: [
          {
            accessKeyId: provisioning.accessKeyId,
            secretAccessKey: provisioning.secretAccessKey,
            userArn: provisioning.principalArn,
            allows: (methodArn: string) =>
              policyAllows(
                {
                  principalId: 'backend',
                  policyDocument: { Version: '2012-10-17', Statement: invokePolicy },
                },
                methodArn,
              ),
          },
        ],
      },
    };
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const { port } = server.address() as AddressInfo;
    const domainName = `127.0.0.1:${port}`;
    server.on(
      'request',
      createApiGateway({
        api: model,
        domainName,
        logger,
        invoke: async (functionName, event) => {
          const pool = pools.get(functionName);
          if (!pool) throw new Error(`no function ${functionName}`);
          const { httpMethod, resource } = event as { httpMethod?: string; resource?: string };
          if (httpMethod && resource) routesCalled.add(`${httpMethod} ${resource}`);
          try {
            return await pool.invoke(event);
          } catch (error) {
            const failure = error as InvocationError;
            invocationErrors.push({
              function: functionName,
              errorType: failure.errorType ?? 'Error',
              message: failure.message,
              init: failure instanceof InvocationError && failure.init,
            });
            throw error;
          }
        },
      }),
    );

    // Table names by their key, through the variable the template hands functions (BOARDS_TABLE, …).
    const names = {} as Record<TableKey, string>;
    for (const key of TABLE_KEYS) {
      const name = functions.map((fn) => fn.environment[TABLES[key].envVar]).find(Boolean);
      if (!name) throw new Error(`no function of the template is given ${TABLES[key].envVar}`);
      names[key] = name;
    }
    const direct = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: dynamoEndpoint,
        region: 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    let demo: DemoData;
    try {
      demo = await seedDemoData(direct, names);
    } finally {
      direct.destroy();
    }

    const apiKeyLimits: RateLimit = model.apiKeyLimits;
    return {
      baseUrl: `http://${domainName}${model.basePath}`,
      provisioning,
      publicBaseUrl: `https://${domainName}${model.basePath}`,
      dynamoEndpoint,
      embeddedDynamo: false,
      tables: names,
      demo,
      apiKeyLimits,
      // As deployed: public internet hosts only.
      destinations: PUBLIC_DESTINATIONS,
      // As deployed, events reach delivery through the stack's stream consumer and queue, not in process.
      eventSinks: [],
      functions: Object.fromEntries(functions.map((fn) => [fn.logicalId, fn])),
      methods,
      routesCalled,
      invocationErrors,
      iam: () => ({
        calls: recorder.calls,
        denied: recorder.denied(),
        unused: Object.fromEntries(
          functions.map((fn) => [
            fn.name,
            unusedGrants(
              statements.get(fn.logicalId) ?? [],
              'dynamodb',
              recorder.calls
                .filter((call) => call.function === fn.name)
                .flatMap((call) => call.checks.filter((check) => check.decision === 'allow')),
            ),
          ]),
        ),
      }),
      output: (logicalId) => pools.get(logicalId)?.output ?? [],
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
