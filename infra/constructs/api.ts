import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  type DomainName,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  type Resource,
  RestApi,
  TokenAuthorizer,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { InfraConfig } from '#infra/config';
import type { RouteSpec, ServiceDefinitions } from '#infra/definitions';
import { gatewaySecurityHeaders } from '#lib/adapters/http/gateway-responses';
import { addCustomDomain } from './api-custom-domain';
import { ApiFirewall } from './api-firewall';
import { addGatewayResponses } from './api-gateway-responses';
import { addMethodNotAllowed } from './api-method-not-allowed';
import { acknowledgeApiFindings, acknowledgeNoAuth } from './api-nag';
import type { ServiceFunctions } from './functions';

/**
 * The access log line. It names the route template (`resourcePath`), never the request path with its
 * query string (the embed token travels there), and no header (the API key travels there).
 */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTime',
  requestTimeEpoch: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  protocol: '$context.protocol',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  errorType: '$context.error.responseType',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  principalId: '$context.authorizer.principalId',
};

export interface EmbedApiProps {
  config: InfraConfig;
  definitions: ServiceDefinitions;
  functions: ServiceFunctions;
}

/** The REST API: shared routes, API key authorizer, 405s, house-shaped gateway errors, logged stage. */
export class EmbedApi extends Construct {
  readonly restApi: RestApi;
  readonly accessLogGroup: LogGroup;
  readonly authorizer: TokenAuthorizer | undefined;
  /** The throttle of every API key without one of its own; the admin CLI adds keys to it. */
  readonly usagePlan: UsagePlan | undefined;
  readonly domainName: DomainName | undefined;
  readonly firewall: ApiFirewall;
  /** The methods authorized by AWS IAM (`auth: 'iam'`): the provisioning API. */
  readonly provisioningMethods: Method[] = [];

  constructor(scope: Construct, id: string, props: EmbedApiProps) {
    super(scope, id);
    const { config, definitions, functions } = props;
    // Headers of every response API Gateway makes itself, with the embed page's framing rules.
    const securityHeaders = gatewaySecurityHeaders(config.frameAncestors);

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', { retention: config.logRetentionDays });
    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: `embed-session-${config.stageName}`,
      description: 'Embed session API',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Usage plans learn the key only from our authorizer (`usageIdentifierKey`), never from a header a
      // client could set to spend another key's budget.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // Access logging needs the account-level API Gateway logging role; it outlives the stack
      // because other APIs of the account may rely on it. One stack per account and region owns it
      // (`apiGatewayAccountRole`): another stage, or another team's stack, may set it already.
      cloudWatchRole: config.apiGatewayAccountRole,
      ...(config.apiGatewayAccountRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      // Behind a custom domain the domain is the only way in (`disableExecuteApiEndpoint`): what fronts
      // it (a WAF, a CDN, the TLS policy) cannot be bypassed through the default endpoint.
      disableExecuteApiEndpoint: config.customDomain !== undefined && config.disableExecuteApiEndpoint,
      deployOptions: {
        stageName: config.stageName,
        throttlingRateLimit: config.throttleRateLimit,
        throttlingBurstLimit: config.throttleBurstLimit,
        accessLogDestination: new LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
        // Execution logs and data traces would record headers and query strings: API keys and tokens.
        loggingLevel: MethodLoggingLevel.OFF,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: false,
      },
    });

    // The stack declares its own ApiUrl output; the automatic one would only duplicate it.
    this.restApi.node.tryRemoveChild('Endpoint');

    // No CORS anywhere (no defaultCorsPreflightOptions): API keys belong on servers, so browsers have
    // no business calling the create route, and OPTIONS gets the 405 like any other unknown method.
    const needsAuthorizer = definitions.routes.some((route) => route.auth === 'apiKey');
    this.authorizer = needsAuthorizer
      ? new TokenAuthorizer(this, 'ApiKeyAuthorizer', {
          handler: functions.get(definitions.authorizer).function,
          authorizerName: 'api-key',
          identitySource: IdentitySource.header('Authorization'),
          // The cache TTL is also how long a revoked key keeps working.
          resultsCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
        })
      : undefined;
    // Throttles each API key on its own bucket. Keys with limits of their own get a plan of their own from
    // the admin CLI; API Gateway refuses a key that is in no plan of this stage.
    this.usagePlan = needsAuthorizer
      ? this.restApi.addUsagePlan('DefaultUsagePlan', {
          name: defaultUsagePlanName(config.stageName),
          description: 'Default per-key rate limit of the embed session API',
          throttle: { rateLimit: config.apiKeyRateLimit, burstLimit: config.apiKeyBurstLimit },
          apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
        })
      : undefined;

    for (const [path, routes] of groupByPath(definitions.routes)) {
      const resource = this.restApi.root.resourceForPath(path);
      for (const route of routes) this.addRoute(resource, route, functions);
      addMethodNotAllowed(
        resource,
        routes.map((route) => route.method),
        securityHeaders,
      );
    }

    addGatewayResponses(this.restApi, securityHeaders);
    this.firewall = new ApiFirewall(this, 'Firewall', {
      stage: this.restApi.deploymentStage,
      embedPageRateLimit: config.embedPageRateLimit,
      webAclArn: config.webAclArn,
    });
    if (config.customDomain) this.domainName = addCustomDomain(this, this.restApi, config.customDomain);
    acknowledgeApiFindings(this.restApi);
  }

  private addRoute(resource: Resource, route: RouteSpec, functions: ServiceFunctions): void {
    const integration = new LambdaIntegration(functions.get(route.function).invoked);
    if (route.auth === 'iam') {
      // The operator's own backend: a SigV4 signature of an IAM principal allowed execute-api:Invoke on
      // the method (the stack's ProvisioningCallerPolicy grants exactly that), never an API key.
      this.provisioningMethods.push(
        resource.addMethod(route.method, integration, { authorizationType: AuthorizationType.IAM }),
      );
      return;
    }
    if (route.auth === 'apiKey') {
      if (!this.authorizer) throw new Error('unreachable: an apiKey route exists but no authorizer was made');
      resource.addMethod(route.method, integration, {
        authorizer: this.authorizer,
        authorizationType: AuthorizationType.CUSTOM,
        // What puts the method under the usage plans, keyed by the authorizer's usageIdentifierKey.
        apiKeyRequired: true,
      });
      return;
    }
    const method = resource.addMethod(route.method, integration, {
      authorizationType: AuthorizationType.NONE,
    });
    acknowledgeNoAuth(
      method,
      `${route.method} ${route.path} is declared auth 'none' in lib/definitions/routes.ts`,
    );
  }
}

/**
 * The name of the stage's default usage plan: the provisioning function finds the plan by it (its id
 * would make the function depend on the stage, which depends on the function).
 */
export function defaultUsagePlanName(stageName: string): string {
  return `embed-session-${stageName}`;
}

/** Routes grouped by path, in route-table order. */
function groupByPath(routes: readonly RouteSpec[]): Map<string, RouteSpec[]> {
  const byPath = new Map<string, RouteSpec[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  return byPath;
}
