/**
 * Reads a cloud assembly (`cdk.out`) as CloudFormation would deploy it: the stack's template, its
 * intrinsic functions resolved to local values (physical names, ARNs, the region), and from it the REST
 * API, the Lambda functions (asset folder, handler, environment), the DynamoDB tables and each function's
 * IAM statements. Nothing here reads lib/definitions: what is checked is the template alone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayReply, GatewayResponseType } from '#lib/adapters/http/gateway-responses';
import type { ApiModel, ApiRoute } from '#local/gateway';
import type { ClientLimit } from '#local/rate-limiter';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is untyped.
export type Json = any;

/** The local stand-ins for what CloudFormation and the account would supply. */
export interface Environment {
  region: string;
  accountId: string;
  partition: string;
}

export const LOCAL_ENVIRONMENT: Environment = {
  region: 'eu-west-1',
  accountId: '123456789012',
  partition: 'aws',
};

export interface CloudAssembly {
  dir: string;
  stackName: string;
  template: Json;
}

/** The one CloudFormation stack of the assembly in `dir`, from its manifest. */
export function readCloudAssembly(dir: string): CloudAssembly {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  const stacks = Object.entries(manifest.artifacts as Record<string, Json>).filter(
    ([, artifact]) => artifact.type === 'aws:cloudformation:stack',
  );
  if (stacks.length !== 1) throw new Error(`expected one stack in ${dir}, found ${stacks.length}`);
  const [stackName, artifact] = stacks[0] as [string, Json];
  const template = JSON.parse(readFileSync(join(dir, artifact.properties.templateFile), 'utf8'));
  return { dir, stackName, template };
}

/** Resolves intrinsic functions of a template to the values a local deployment of it would have. */
export class Resolver {
  constructor(
    private readonly assembly: CloudAssembly,
    readonly env: Environment = LOCAL_ENVIRONMENT,
  ) {}

  private resource(logicalId: string): Json {
    const resource = this.assembly.template.Resources[logicalId];
    if (!resource) throw new Error(`the template has no resource ${logicalId}`);
    return resource;
  }

  /** The physical name CloudFormation would give a resource (its own name property when it sets one). */
  physicalName(logicalId: string): string {
    const { Type: type, Properties: props = {} } = this.resource(logicalId);
    const own: Record<string, string | undefined> = {
      'AWS::DynamoDB::Table': props.TableName,
      'AWS::Lambda::Function': props.FunctionName,
      'AWS::Logs::LogGroup': props.LogGroupName,
      'AWS::IAM::Role': props.RoleName,
      'AWS::ApiGateway::Stage': props.StageName,
    };
    const name = own[type];
    return name === undefined ? `${this.assembly.stackName}-${logicalId}` : String(this.resolve(name));
  }

  private ref(name: string): string {
    switch (name) {
      case 'AWS::Region':
        return this.env.region;
      case 'AWS::AccountId':
        return this.env.accountId;
      case 'AWS::Partition':
        return this.env.partition;
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::StackName':
        return this.assembly.stackName;
      default:
        // A queue's Ref is its URL.
        if (this.assembly.template.Resources[name]?.Type === 'AWS::SQS::Queue')
          return this.getAtt(name, 'QueueUrl');
        if (this.assembly.template.Parameters?.[name])
          throw new Error(`parameter ${name} has no local value`);
        return this.physicalName(name);
    }
  }

  private getAtt(logicalId: string, attribute: string): string {
    const { Type: type } = this.resource(logicalId);
    const { region, accountId, partition } = this.env;
    const name = this.physicalName(logicalId);
    const key = `${type}.${attribute}`;
    switch (key) {
      case 'AWS::DynamoDB::Table.Arn':
        return `arn:${partition}:dynamodb:${region}:${accountId}:table/${name}`;
      case 'AWS::Lambda::Function.Arn':
        return `arn:${partition}:lambda:${region}:${accountId}:function:${name}`;
      case 'AWS::IAM::Role.Arn':
        return `arn:${partition}:iam::${accountId}:role/${name}`;
      case 'AWS::Logs::LogGroup.Arn':
        return `arn:${partition}:logs:${region}:${accountId}:log-group:${name}:*`;
      case 'AWS::KMS::Key.Arn':
        return `arn:${partition}:kms:${region}:${accountId}:key/${name}`;
      case 'AWS::SNS::Topic.TopicArn':
        return `arn:${partition}:sns:${region}:${accountId}:${name}`;
      case 'AWS::DynamoDB::Table.StreamArn':
        return `arn:${partition}:dynamodb:${region}:${accountId}:table/${name}/stream/1970-01-01T00:00:00.000`;
      case 'AWS::SQS::Queue.Arn':
        return `arn:${partition}:sqs:${region}:${accountId}:${name}`;
      case 'AWS::SQS::Queue.QueueUrl':
        return `https://sqs.${region}.amazonaws.com/${accountId}/${name}`;
      case 'AWS::Events::EventBus.Arn':
        return `arn:${partition}:events:${region}:${accountId}:event-bus/${name}`;
      case 'AWS::ApiGateway::RestApi.RootResourceId':
        return `${name}-root`;
      default:
        throw new Error(`no local value for Fn::GetAtt ${logicalId}.${attribute} (${type})`);
    }
  }

  /** `value` with every intrinsic function replaced by its local value. */
  resolve(value: Json): Json {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const [fn] = keys as [string];
      const arg = value[fn];
      switch (fn) {
        case 'Ref':
          return this.ref(arg);
        case 'Fn::GetAtt':
          return this.getAtt(arg[0], arg[1]);
        case 'Fn::Join':
          return (this.resolve(arg[1]) as unknown[]).join(arg[0]);
        case 'Fn::Select':
          return (this.resolve(arg[1]) as unknown[])[Number(this.resolve(arg[0]))];
        case 'Fn::Split':
          return String(this.resolve(arg[1])).split(arg[0]);
        case 'Fn::Sub':
          return this.sub(arg);
        default:
          if (fn.startsWith('Fn::')) throw new Error(`intrinsic ${fn} is not supported locally`);
      }
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.resolve(item)]));
  }

  private sub(arg: Json): string {
    const [text, variables] = typeof arg === 'string' ? [arg, {}] : [arg[0] as string, arg[1] as Json];
    return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
      if (name in variables) return String(this.resolve(variables[name]));
      const [id, attribute] = name.split('.');
      return attribute ? this.getAtt(id as string, attribute) : this.ref(id as string);
    });
  }
}

/** Resources of one type, by logical id. */
export function resourcesOfType(assembly: CloudAssembly, type: string): [string, Json][] {
  return Object.entries(assembly.template.Resources as Record<string, Json>).filter(
    ([, resource]) => resource.Type === type,
  );
}

/** The logical id a value refers to through `Ref` or `Fn::GetAtt`, searched anywhere inside it. */
export function referencedIds(value: Json): string[] {
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (value === null || typeof value !== 'object') return [];
  if (typeof value.Ref === 'string') return [value.Ref];
  if (Array.isArray(value['Fn::GetAtt'])) return [value['Fn::GetAtt'][0]];
  return Object.values(value).flatMap(referencedIds);
}

export interface AssemblyFunction {
  logicalId: string;
  name: string;
  arn: string;
  /** The folder of its asset in the cloud assembly. */
  codeDir: string;
  /** `index.handler`: file `index.*`, export `handler`. */
  handler: string;
  runtime: string;
  memoryMb: number;
  timeoutSeconds: number;
  /** Exactly the variables the template sets, resolved. */
  environment: Record<string, string>;
  roleLogicalId: string;
  /** The template's `Description`, which names what the function serves. */
  description: string;
}

/** Every Lambda function of the template, with its asset from the cloud assembly. */
export function assemblyFunctions(assembly: CloudAssembly, resolver: Resolver): AssemblyFunction[] {
  return resourcesOfType(assembly, 'AWS::Lambda::Function').map(([logicalId, fn]) => {
    const assetPath = fn.Metadata?.['aws:asset:path'];
    if (typeof assetPath !== 'string') {
      throw new Error(
        `function ${logicalId} has no aws:asset:path metadata (synthesize with asset metadata)`,
      );
    }
    const props = fn.Properties;
    return {
      logicalId,
      name: resolver.physicalName(logicalId),
      arn: resolver.resolve({ 'Fn::GetAtt': [logicalId, 'Arn'] }),
      codeDir: join(assembly.dir, assetPath),
      handler: props.Handler,
      runtime: props.Runtime,
      memoryMb: props.MemorySize ?? 128,
      timeoutSeconds: props.Timeout ?? 3,
      environment: Object.fromEntries(
        Object.entries(resolver.resolve(props.Environment?.Variables ?? {}) as Record<string, unknown>).map(
          ([key, value]) => [key, String(value)],
        ),
      ),
      roleLogicalId: referencedIds(props.Role)[0] as string,
      description: String(props.Description ?? ''),
    };
  });
}

/** Every statement of the identity policies of a role (inline in the role or attached to it). */
export function roleStatements(assembly: CloudAssembly, resolver: Resolver, roleLogicalId: string): Json[] {
  const role = assembly.template.Resources[roleLogicalId];
  const managed = role?.Properties?.ManagedPolicyArns ?? [];
  if (managed.length > 0)
    throw new Error(`role ${roleLogicalId} has managed policies, not evaluated locally`);
  const inline: Json[] = (role?.Properties?.Policies ?? []).flatMap(
    (policy: Json) => policy.PolicyDocument.Statement,
  );
  const attached = resourcesOfType(assembly, 'AWS::IAM::Policy')
    .filter(([, policy]) => referencedIds(policy.Properties.Roles ?? []).includes(roleLogicalId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement);
  return resolver.resolve([...inline, ...attached]);
}

export interface AssemblyTable {
  logicalId: string;
  name: string;
  /** CreateTable input from the template's own properties (keys, indexes, projections). */
  createTable: Json;
  /** The TTL attribute, when the template enables it. */
  ttlAttribute: string | undefined;
}

/** The template's DynamoDB tables, as CreateTable inputs. */
export function assemblyTables(assembly: CloudAssembly, resolver: Resolver): AssemblyTable[] {
  return resourcesOfType(assembly, 'AWS::DynamoDB::Table').map(([logicalId, table]) => {
    const props = resolver.resolve(table.Properties);
    const name = resolver.physicalName(logicalId);
    const ttl = props.TimeToLiveSpecification;
    return {
      logicalId,
      name,
      createTable: {
        TableName: name,
        AttributeDefinitions: props.AttributeDefinitions,
        KeySchema: props.KeySchema,
        BillingMode: props.BillingMode ?? 'PROVISIONED',
        ...(props.BillingMode === 'PAY_PER_REQUEST'
          ? {}
          : { ProvisionedThroughput: props.ProvisionedThroughput }),
        ...(props.GlobalSecondaryIndexes
          ? {
              GlobalSecondaryIndexes: props.GlobalSecondaryIndexes.map((index: Json) => ({
                IndexName: index.IndexName,
                KeySchema: index.KeySchema,
                Projection: index.Projection,
                ...(index.ProvisionedThroughput
                  ? { ProvisionedThroughput: index.ProvisionedThroughput }
                  : {}),
              })),
            }
          : {}),
        ...(props.LocalSecondaryIndexes ? { LocalSecondaryIndexes: props.LocalSecondaryIndexes } : {}),
      },
      ttlAttribute: ttl?.Enabled ? ttl.AttributeName : undefined,
    };
  });
}

/** The status API Gateway gives each response type when the API does not configure it. */
const DEFAULT_STATUS: Record<GatewayResponseType, number> = {
  ACCESS_DENIED: 403,
  API_CONFIGURATION_ERROR: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  AUTHORIZER_FAILURE: 500,
  BAD_REQUEST_BODY: 400,
  BAD_REQUEST_PARAMETERS: 400,
  DEFAULT_4XX: 400,
  DEFAULT_5XX: 500,
  EXPIRED_TOKEN: 403,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  INVALID_API_KEY: 403,
  INVALID_SIGNATURE: 403,
  MISSING_AUTHENTICATION_TOKEN: 403,
  QUOTA_EXCEEDED: 429,
  REQUEST_TOO_LARGE: 413,
  RESOURCE_NOT_FOUND: 404,
  THROTTLED: 429,
  UNAUTHORIZED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  WAF_FILTERED: 403,
};

/**
 * Header values of API Gateway mappings are quoted literals (`'no-store'`), or the request id the
 * emulator sets itself; anything else is refused.
 */
function literalHeaders(
  parameters: Record<string, string> | undefined,
  prefix: string,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(parameters ?? {})) {
    if (!key.startsWith(prefix)) continue;
    // The request id: the shared gateway emulator sets X-Request-Id on every answer itself.
    if (value === 'context.requestId') continue;
    const literal = /^'(.*)'$/s.exec(value);
    if (!literal) throw new Error(`${key} maps ${value}, not a literal; not supported locally`);
    headers[key.slice(prefix.length)] = literal[1] as string;
  }
  return headers;
}

export interface AssemblyApi {
  model: Omit<ApiModel, 'apiKeyLimits'> & { apiKeyLimits: ApiModel['apiKeyLimits'] };
  /**
   * The statements of the template's managed policies that allow `execute-api:Invoke` (resolved): what a
   * principal given them may call among the AWS_IAM methods.
   */
  invokePolicy: Json[];
  /** Each method's integration function: logical id by `METHOD path`. */
  methods: Record<string, string>;
}

/** The REST API of the template (its only one), as the emulator's model. */
export function assemblyApi(assembly: CloudAssembly, resolver: Resolver): AssemblyApi {
  const apis = resourcesOfType(assembly, 'AWS::ApiGateway::RestApi');
  if (apis.length !== 1) throw new Error(`expected one REST API, found ${apis.length}`);
  const [apiId, api] = apis[0] as [string, Json];
  const belongs = (resource: Json) => referencedIds(resource.Properties.RestApiId ?? []).includes(apiId);

  const apiResources = Object.fromEntries(resourcesOfType(assembly, 'AWS::ApiGateway::Resource'));
  const pathOf = (resourceId: Json): string => {
    if (resourceId['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const resource = apiResources[resourceId.Ref];
    if (!resource) throw new Error(`unknown API resource ${JSON.stringify(resourceId)}`);
    return `${pathOf(resource.Properties.ParentId)}/${resource.Properties.PathPart}`;
  };

  const authorizers = resourcesOfType(assembly, 'AWS::ApiGateway::Authorizer').filter(([, a]) => belongs(a));
  if (authorizers.length !== 1) throw new Error(`expected one authorizer, found ${authorizers.length}`);
  const [authorizerId, authorizer] = authorizers[0] as [string, Json];
  if (authorizer.Properties.Type !== 'TOKEN') throw new Error('only TOKEN authorizers are emulated');
  const identity = /^method\.request\.header\.(.+)$/.exec(authorizer.Properties.IdentitySource ?? '');
  if (!identity) throw new Error(`unsupported identity source ${authorizer.Properties.IdentitySource}`);
  const authorizerFunction = referencedIds(authorizer.Properties.AuthorizerUri).find(
    (id) => assembly.template.Resources[id]?.Type === 'AWS::Lambda::Function',
  );
  if (!authorizerFunction) throw new Error('the authorizer invokes no function of the template');

  const routes: ApiRoute[] = [];
  const methods: Record<string, string> = {};
  const mocks: Record<string, GatewayReply> = {};
  for (const [id, method] of resourcesOfType(assembly, 'AWS::ApiGateway::Method')) {
    if (!belongs(method)) continue;
    const props = method.Properties;
    const path = pathOf(props.ResourceId) || '/';
    const integration = props.Integration ?? {};
    if (integration.Type === 'MOCK') {
      const response = integration.IntegrationResponses?.[0];
      if (props.HttpMethod !== 'ANY' || !response) throw new Error(`mock method ${id} is not supported`);
      mocks[path] = {
        status: Number(response.StatusCode),
        headers: literalHeaders(resolver.resolve(response.ResponseParameters), 'method.response.header.'),
        body: response.ResponseTemplates?.['application/json'] ?? '',
      };
      continue;
    }
    if (integration.Type !== 'AWS_PROXY') throw new Error(`method ${id}: integration ${integration.Type}`);
    const fn = referencedIds(integration.Uri).find(
      (ref) => assembly.template.Resources[ref]?.Type === 'AWS::Lambda::Function',
    );
    if (!fn) throw new Error(`method ${id} integrates no function of the template`);
    let auth: ApiRoute['auth'] = 'none';
    if (props.AuthorizationType === 'CUSTOM') {
      if (!referencedIds(props.AuthorizerId).includes(authorizerId))
        throw new Error(`${id}: other authorizer`);
      auth = 'apiKey';
    } else if (props.AuthorizationType === 'AWS_IAM') {
      auth = 'iam';
    } else if (props.AuthorizationType && props.AuthorizationType !== 'NONE') {
      throw new Error(`method ${id}: authorization ${props.AuthorizationType} is not emulated`);
    }
    routes.push({
      method: props.HttpMethod,
      path,
      function: fn,
      auth,
      apiKeyRequired: props.ApiKeyRequired === true,
    });
    methods[`${props.HttpMethod} ${path}`] = fn;
  }

  const responses: Partial<Record<GatewayResponseType, GatewayReply>> = {};
  for (const [, response] of resourcesOfType(assembly, 'AWS::ApiGateway::GatewayResponse')) {
    if (!belongs(response)) continue;
    const props = resolver.resolve(response.Properties);
    const type = props.ResponseType as GatewayResponseType;
    responses[type] = {
      status: Number(props.StatusCode ?? DEFAULT_STATUS[type]),
      headers: literalHeaders(props.ResponseParameters, 'gatewayresponse.header.'),
      body: props.ResponseTemplates?.['application/json'] ?? '{"message":null}',
    };
  }
  const response = (type: GatewayResponseType): GatewayReply => {
    const own = responses[type];
    if (own) return own;
    // An unconfigured type takes DEFAULT_4XX's or DEFAULT_5XX's mapping, with its own status.
    const status = DEFAULT_STATUS[type];
    const fallback = responses[status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX'];
    return {
      status,
      headers: { 'Content-Type': 'application/json', ...(fallback?.headers ?? {}) },
      body: fallback?.body ?? '{"message":null}',
    };
  };

  const stages = resourcesOfType(assembly, 'AWS::ApiGateway::Stage').filter(([, s]) => belongs(s));
  if (stages.length !== 1) throw new Error(`expected one stage, found ${stages.length}`);
  const [stageId, stage] = stages[0] as [string, Json];
  const stageName = String(resolver.resolve(stage.Properties.StageName));

  const plans = resourcesOfType(assembly, 'AWS::ApiGateway::UsagePlan').filter(([, plan]) =>
    (plan.Properties.ApiStages ?? []).some(
      (s: Json) => referencedIds(s.ApiId).includes(apiId) && referencedIds(s.Stage).includes(stageId),
    ),
  );
  if (plans.length !== 1) throw new Error(`expected one usage plan on the stage, found ${plans.length}`);
  const throttle = (plans[0] as [string, Json])[1].Properties.Throttle ?? {};
  const clientLimit = stageClientLimit(assembly, stageId);

  return {
    model: {
      routes,
      stage: stageName,
      basePath: `/${stageName}`,
      accountId: resolver.env.accountId,
      region: resolver.env.region,
      apiId: resolver.physicalName(apiId),
      authorizer: {
        function: authorizerFunction,
        identityHeader: identity[1] as string,
        resultTtlSeconds: authorizer.Properties.AuthorizerResultTtlInSeconds ?? 300,
      },
      apiKeySource: api.Properties.ApiKeySourceType === 'AUTHORIZER' ? 'AUTHORIZER' : 'HEADER',
      apiKeyLimits: { rate: Number(throttle.RateLimit), burst: Number(throttle.BurstLimit) },
      clientLimit,
      response,
      methodNotAllowed: (path) => mocks[path],
    },
    methods,
    invokePolicy: resolver.resolve(
      resourcesOfType(assembly, 'AWS::IAM::ManagedPolicy')
        .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Json[])
        .filter((statement) => [statement.Action].flat().includes('execute-api:Invoke')),
    ),
  };
}

/**
 * The per-client limit of the web ACL associated with the stage: its one rate-based rule, counting the
 * paths its scope-down statement names. Undefined when the stage has no web ACL of the template's own (an
 * operator's, by ARN, is not in the template).
 */
function stageClientLimit(assembly: CloudAssembly, stageId: string): ClientLimit | undefined {
  const association = resourcesOfType(assembly, 'AWS::WAFv2::WebACLAssociation').find(([, a]) =>
    referencedIds(a.Properties.ResourceArn).includes(stageId),
  );
  const aclId = association && referencedIds(association[1].Properties.WebACLArn)[0];
  const acl = aclId ? assembly.template.Resources[aclId] : undefined;
  if (!acl) return undefined;
  const rules = (acl.Properties.Rules ?? []).filter((rule: Json) => rule.Statement.RateBasedStatement);
  if (rules.length !== 1) throw new Error(`expected one rate-based rule in ${aclId}, found ${rules.length}`);
  const rate = rules[0].Statement.RateBasedStatement;
  const match = rate.ScopeDownStatement?.ByteMatchStatement;
  if (
    rate.AggregateKeyType !== 'IP' ||
    match?.PositionalConstraint !== 'ENDS_WITH' ||
    !match.FieldToMatch.UriPath
  )
    throw new Error(`the rate-based rule of ${aclId} is not one the assembly runner emulates`);
  return {
    requests: Number(rate.Limit),
    windowSeconds: Number(rate.EvaluationWindowSec ?? 300),
    pathSuffix: String(match.SearchString),
  };
}
