import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  type DomainName,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  type Resource,
  ResponseType,
  RestApi,
  SecurityPolicy,
  TokenAuthorizer,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { InfraConfig } from '#infra/config';
import type { RouteSpec, ServiceDefinitions } from '#infra/definitions';
import {
  GATEWAY_RESPONSES,
  type GatewayResponseType,
  gatewayResponse,
  gatewaySecurityHeaders,
  methodNotAllowed,
} from '#lib/definitions/gateway-responses';
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

/** Content types answered with a mapped 405; others still get the default integration response. */
const MOCK_REQUEST_CONTENT_TYPES = [
  'application/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
  'application/xml',
  'text/xml',
  'application/octet-stream',
];

/**
 * A JSON document as a VTL mapping template. `$` and `#` start VTL references and directives, so they
 * are written as JSON unicode escapes: the template stays valid JSON and renders unchanged.
 */
export function jsonTemplate(value: unknown): string {
  return JSON.stringify(value).replaceAll('$', '\\u0024').replaceAll('#', '\\u0023');
}

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
  readonly domainName: DomainName | undefined;
  /** Headers of every response API Gateway makes itself, with the embed page's framing rules. */
  private readonly securityHeaders: Record<string, string>;

  constructor(scope: Construct, id: string, props: EmbedApiProps) {
    super(scope, id);
    const { config, definitions, functions } = props;
    this.securityHeaders = gatewaySecurityHeaders(config.frameAncestors);

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', { retention: config.logRetentionDays });
    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: `embed-session-${config.stageName}`,
      description: 'Embed session API',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Access logging needs the account-level API Gateway logging role; it outlives the stack
      // because other APIs of the account may rely on it.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
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

    for (const [path, routes] of groupByPath(definitions.routes)) {
      const resource = this.restApi.root.resourceForPath(path);
      for (const route of routes) this.addRoute(resource, route, functions);
      this.addMethodNotAllowed(resource, routes);
    }

    for (const type of Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[]) {
      const response = gatewayResponse(type, this.securityHeaders);
      this.restApi.addGatewayResponse(type, {
        type: ResponseType.of(type),
        statusCode: String(response.status),
        responseHeaders: quoted(response.headers),
        templates: { 'application/json': jsonTemplate(JSON.parse(response.body)) },
      });
    }

    if (config.customDomain) {
      this.domainName = this.restApi.addDomainName('CustomDomain', {
        domainName: config.customDomain.domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', config.customDomain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
      });
    }

    this.suppressApiFindings();
  }

  private addRoute(resource: Resource, route: RouteSpec, functions: ServiceFunctions): void {
    const integration = new LambdaIntegration(functions.get(route.function).function);
    if (route.auth === 'apiKey') {
      if (!this.authorizer) throw new Error('unreachable: an apiKey route exists but no authorizer was made');
      resource.addMethod(route.method, integration, {
        authorizer: this.authorizer,
        authorizationType: AuthorizationType.CUSTOM,
      });
      return;
    }
    const method = resource.addMethod(route.method, integration, {
      authorizationType: AuthorizationType.NONE,
    });
    suppressNoAuth(method, `${route.method} ${route.path} is declared auth 'none' in lib/routes.ts`);
  }

  /**
   * `ANY` on the resource answers every other method with 405; API Gateway prefers the specific
   * methods over ANY. The integration response has no selection pattern, so it is the default one and
   * turns whatever the mock returns (even for an unexpected content type) into the 405.
   */
  private addMethodNotAllowed(resource: Resource, routes: readonly RouteSpec[]): void {
    const response = methodNotAllowed(
      routes.map((route) => route.method),
      this.securityHeaders,
    );
    const headerNames = Object.keys(response.headers).map((name) => `method.response.header.${name}`);
    const integration = new MockIntegration({
      passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
      requestTemplates: Object.fromEntries(
        MOCK_REQUEST_CONTENT_TYPES.map((type) => [type, '{"statusCode": 405}']),
      ),
      integrationResponses: [
        {
          statusCode: '405',
          responseTemplates: { 'application/json': jsonTemplate(JSON.parse(response.body)) },
          responseParameters: Object.fromEntries(
            Object.entries(quoted(response.headers)).map(([name, value]) => [
              `method.response.header.${name}`,
              value,
            ]),
          ),
        },
      ],
    });
    const method = resource.addMethod('ANY', integration, {
      authorizationType: AuthorizationType.NONE,
      methodResponses: [
        {
          statusCode: '405',
          responseParameters: Object.fromEntries(headerNames.map((name) => [name, true])),
        },
      ],
    });
    suppressNoAuth(method, 'answers 405 from a mock integration and reaches no backend');
  }

  private suppressApiFindings(): void {
    // Acknowledged on the RestApi, so they cover its methods, stage and logging role.
    Validations.of(this.restApi).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'The functions validate bodies and answer 400 with a message naming the problem (spec); ' +
          'gateway model validation would duplicate the schema and replace that message with a generic one.',
      },
      {
        id: 'AwsSolutions-APIG3',
        reason:
          'No WAF for now: callers are server-side SaaS backends with API keys; stage throttling and the ' +
          'authorizer cache bound abuse. A web ACL can be associated with the stage without code changes.',
      },
      {
        id: 'AwsSolutions-APIG6',
        reason:
          'Execution logging is off on purpose: it records headers and query strings, where API keys and ' +
          'embed session tokens travel. JSON access logs, Lambda logs and stage metrics cover operations.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'Callers are SaaS backends authenticated by API key through the Lambda TOKEN authorizer, not ' +
          'end users of a Cognito user pool; the remaining methods are unauthenticated by design (APIG4).',
      },
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The account-level API Gateway logging role uses the AWS-maintained AmazonAPIGatewayPushToCloudWatchLogs ' +
          'policy, which exists for exactly this role and is required for access logging.',
      },
    );
  }
}

/**
 * Header values as API Gateway mapping expressions: a static value is single-quoted. A quote inside the
 * value has no documented escape, so it fails synthesis here rather than the deployment.
 */
function quoted(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      if (value.includes("'")) throw new Error(`The ${name} header value cannot contain a quote: ${value}`);
      return [name, `'${value}'`];
    }),
  );
}

/** Routes grouped by path, in route-table order. */
function groupByPath(routes: readonly RouteSpec[]): Map<string, RouteSpec[]> {
  const byPath = new Map<string, RouteSpec[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  return byPath;
}

function suppressNoAuth(method: Method, why: string): void {
  Validations.of(method).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason: `No authorizer by design: ${why}.`,
  });
}
