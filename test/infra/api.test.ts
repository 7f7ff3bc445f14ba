import { beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_LIMITED_RESPONSE, EMBED_PAGE_CLIENT_LIMIT } from '#lib/definitions/rate-limits';
import { FUNCTIONS, ROUTES } from '#lib/definitions/routes';
import type { Json } from '#test/support/infra';
import {
  functionByDescription,
  methodsByRoute,
  resources,
  roleStatements,
  type Synthesized,
  synthesize,
} from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const PATHS = [...new Set(ROUTES.map((route) => route.path))];
const API_KEY_ROUTES = ROUTES.filter((route) => route.auth === 'apiKey');
const OPEN_ROUTES = ROUTES.filter((route) => route.auth === 'none');
const IAM_ROUTES = ROUTES.filter((route) => route.auth === 'iam');

const synth = useSynthesized();
let methods: Record<string, Json>;
let authorizers: Record<string, Json>;

beforeAll(() => {
  methods = methodsByRoute(synth.template);
  authorizers = resources(synth.template, 'AWS::ApiGateway::Authorizer');
});

const label = (route: (typeof ROUTES)[number]) => `${route.method} ${route.path}`;
const functionId = (name: keyof typeof FUNCTIONS) =>
  functionByDescription(synth.template, FUNCTIONS[name].description)[0];

describe('REST API routes', () => {
  it('is a regional REST API (v1), which can answer 401 with our own body', () => {
    const [api] = Object.values(resources(synth.template, 'AWS::ApiGateway::RestApi'));
    expect(api.Properties.EndpointConfiguration).toEqual({ Types: ['REGIONAL'] });
  });

  it.each(ROUTES.map((route) => [label(route), route] as const))(
    'sends %s to its function through a Lambda proxy integration',
    (_, route) => {
      const integration = methods[label(route)].Properties.Integration;
      expect(integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(integration.Uri)).toContain(`"${functionId(route.function)}","Arn"`);
    },
  );

  it('defines no method beyond the route table and one ANY per path', () => {
    const expected = [...ROUTES.map(label), ...PATHS.map((path) => `ANY ${path}`)].sort();
    expect(Object.keys(methods).sort()).toEqual(expected);
  });

  it('lets API Gateway invoke each routed function from its own method', () => {
    const permissions = Object.values(resources(synth.template, 'AWS::Lambda::Permission'));
    for (const route of ROUTES) {
      const own = permissions.filter(
        (p) => p.Properties.FunctionName['Fn::GetAtt']?.[0] === functionId(route.function),
      );
      const sourceArns = own.map((p) => JSON.stringify(p.Properties.SourceArn));
      const path = route.path.replace(/\{\w+\}/g, '*');
      expect(sourceArns.some((arn) => arn.includes(`/${route.method}${path}`))).toBe(true);
      for (const p of own) expect(p.Properties.Principal).toBe('apigateway.amazonaws.com');
    }
  });
});

describe('API key authorizer', () => {
  it('is one TOKEN authorizer backed by the authorizer function', () => {
    const all = Object.values(authorizers);
    expect(all).toHaveLength(1);
    const [authorizer] = all;
    expect(authorizer.Properties.Type).toBe('TOKEN');
    expect(JSON.stringify(authorizer.Properties.AuthorizerUri)).toContain(
      `"${functionId('authorizer')}","Arn"`,
    );
  });

  it('reads the key from the Authorization header', () => {
    const [authorizer] = Object.values(authorizers);
    expect(authorizer.Properties.IdentitySource).toBe('method.request.header.Authorization');
  });

  it('caches authorizer results for 300 seconds by default', () => {
    const [authorizer] = Object.values(authorizers);
    expect(authorizer.Properties.AuthorizerResultTtlInSeconds).toBe(300);
  });

  it.each(API_KEY_ROUTES.map(label))('protects %s with the authorizer', (route) => {
    const [authorizerId] = Object.keys(authorizers);
    expect(methods[route].Properties.AuthorizationType).toBe('CUSTOM');
    expect(methods[route].Properties.AuthorizerId).toEqual({ Ref: authorizerId });
  });

  it('protects POST /api/embed/sessions', () => {
    expect(methods['POST /api/embed/sessions'].Properties.AuthorizationType).toBe('CUSTOM');
  });

  it.each(OPEN_ROUTES.map(label))("leaves %s (auth 'none') without an authorizer", (route) => {
    expect(methods[route].Properties.AuthorizationType).toBe('NONE');
    expect(methods[route].Properties.AuthorizerId).toBeUndefined();
  });

  it.each(['GET /embed', 'HEAD /embed'])(
    'serves %s from the embed page function without the API key authorizer',
    (route) => {
      const method = methods[route].Properties;
      expect(method.AuthorizationType).toBe('NONE');
      expect(method.AuthorizerId).toBeUndefined();
      expect(JSON.stringify(method.Integration.Uri)).toContain(functionId('embedPage'));
    },
  );

  it('serves GET /embed.js from the embed script function without the API key authorizer', () => {
    const method = methods['GET /embed.js'].Properties;
    expect(method.AuthorizationType).toBe('NONE');
    expect(method.AuthorizerId).toBeUndefined();
    expect(JSON.stringify(method.Integration.Uri)).toContain(functionId('embedScript'));
  });

  it('leaves GET /health open', () => {
    expect(methods['GET /health'].Properties.AuthorizationType).toBe('NONE');
  });

  it('lets only this API invoke the authorizer function', () => {
    const permissions = Object.values(resources(synth.template, 'AWS::Lambda::Permission')).filter(
      (p) => p.Properties.FunctionName['Fn::GetAtt']?.[0] === functionId('authorizer'),
    );
    expect(permissions).toHaveLength(1);
    expect(JSON.stringify(permissions[0].Properties.SourceArn)).toContain('/authorizers/');
  });
});

describe('AWS IAM authorization of the provisioning routes', () => {
  it('has provisioning routes to authorize', () => {
    expect(IAM_ROUTES.map(label)).toContain('PUT /admin/orgs/{orgId}/boards/{boardId}');
  });

  it.each(IAM_ROUTES.map(label))(
    'authorizes %s with AWS_IAM, neither the API key authorizer nor a key',
    (route) => {
      const method = methods[route].Properties;
      expect(method.AuthorizationType).toBe('AWS_IAM');
      expect(method.AuthorizerId).toBeUndefined();
      expect(method.ApiKeyRequired).not.toBe(true);
      expect(JSON.stringify(method.Integration.Uri)).toContain(functionId('provisioning'));
    },
  );

  it('grants execute-api:Invoke on exactly the provisioning methods in one managed policy, output by ARN', () => {
    const policies = Object.entries(resources(synth.template, 'AWS::IAM::ManagedPolicy')).filter(
      ([, policy]) => JSON.stringify(policy.Properties.PolicyDocument).includes('execute-api:Invoke'),
    );
    expect(policies).toHaveLength(1);
    const [[policyId, policy]] = policies as [[string, Json]];
    const [statement, ...others] = policy.Properties.PolicyDocument.Statement;
    expect(others).toEqual([]);
    expect(statement).toMatchObject({ Effect: 'Allow', Action: 'execute-api:Invoke' });
    const resourcesGranted = JSON.stringify(statement.Resource);
    for (const route of IAM_ROUTES) {
      expect(resourcesGranted).toContain(`/${route.method}${route.path.replace(/\{\w+\}/g, '*')}"`);
    }
    for (const route of [...API_KEY_ROUTES, ...OPEN_ROUTES]) {
      expect(resourcesGranted).not.toContain(`/${route.method}${route.path.replace(/\{\w+\}/g, '*')}"`);
    }
    expect(synth.template.toJSON().Outputs.ProvisioningCallerPolicyArn.Value).toEqual({ Ref: policyId });
  });

  it('lets the provisioning function keep the usage plans in step, on API keys and usage plan keys only', () => {
    const [, fn] = functionByDescription(synth.template, FUNCTIONS.provisioning.description);
    expect(fn.Properties.Environment.Variables.USAGE_PLAN_NAME).toBe('embed-session-prod');
    const statements = roleStatements(synth.template, fn.Properties.Role['Fn::GetAtt'][0]);
    const apigateway = statements.filter((statement) =>
      JSON.stringify(statement.Action).includes('apigateway:'),
    );
    expect(apigateway.map((statement) => statement.Action).sort()).toEqual([
      'apigateway:DELETE',
      'apigateway:GET',
      'apigateway:PATCH',
      'apigateway:POST',
    ]);
    expect(JSON.stringify(apigateway)).not.toMatch(/\/restapis/);
  });
});

describe('stage maximum session lifetime from context', () => {
  it('passes maxSessionLifetimeSeconds to create-session alone, and nothing when unset', () => {
    const [, unset] = functionByDescription(synth.template, FUNCTIONS.createSession.description);
    expect(unset.Properties.Environment.Variables.MAX_SESSION_LIFETIME_SECONDS).toBeUndefined();
    const override = synthesize({ context: { maxSessionLifetimeSeconds: '86400' } });
    try {
      const withIt = Object.values(resources(override.template, 'AWS::Lambda::Function')).filter(
        (fn) => fn.Properties.Environment?.Variables?.MAX_SESSION_LIFETIME_SECONDS !== undefined,
      );
      expect(withIt.map((fn) => fn.Properties.Description)).toEqual([FUNCTIONS.createSession.description]);
      expect(withIt[0].Properties.Environment.Variables.MAX_SESSION_LIFETIME_SECONDS).toBe('86400');
    } finally {
      override.dispose();
    }
  });
});

describe('authorizer cache TTL from context', () => {
  it('uses authorizerCacheTtlSeconds from context (a `-c` string) as the cache TTL', () => {
    const override = synthesize({ context: { authorizerCacheTtlSeconds: '60' } });
    try {
      override.template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
        AuthorizerResultTtlInSeconds: 60,
      });
    } finally {
      override.dispose();
    }
  });
});

describe('405 for other methods', () => {
  it.each(PATHS)('answers every other method on %s from a mock ANY method without auth', (path) => {
    const any = methods[`ANY ${path}`].Properties;
    expect(any.AuthorizationType).toBe('NONE');
    expect(any.Integration.Type).toBe('MOCK');
    expect(any.MethodResponses).toEqual([
      {
        StatusCode: '405',
        ResponseParameters: {
          'method.response.header.Allow': true,
          'method.response.header.Content-Type': true,
          'method.response.header.Cache-Control': true,
          'method.response.header.X-Content-Type-Options': true,
          'method.response.header.Content-Security-Policy': true,
          'method.response.header.Referrer-Policy': true,
          'method.response.header.X-Request-Id': true,
        },
      },
    ]);
  });

  it.each(PATHS)('maps any mock result on %s to a 405 JSON body naming the allowed methods', (path) => {
    const allowed = ROUTES.filter((route) => route.path === path)
      .map((route) => route.method)
      .sort()
      .join(', ');
    const integration = methods[`ANY ${path}`].Properties.Integration;
    expect(integration.RequestTemplates['application/json']).toBe('{"statusCode": 405}');
    expect(integration.IntegrationResponses).toHaveLength(1);
    const [response] = integration.IntegrationResponses;
    // No selection pattern: the default response, whatever status the mock produced.
    expect(response.SelectionPattern).toBeUndefined();
    expect(response.StatusCode).toBe('405');
    expect(response.ResponseParameters).toEqual({
      'method.response.header.Allow': `'${allowed}'`,
      'method.response.header.Content-Type': "'application/json'",
      'method.response.header.Cache-Control': "'no-store'",
      'method.response.header.X-Content-Type-Options': "'nosniff'",
      'method.response.header.Content-Security-Policy':
        "'sandbox; frame-ancestors https: http://localhost:* http://127.0.0.1:*'",
      'method.response.header.Referrer-Policy': "'no-referrer'",
      // API Gateway's request id, as every other answer carries it.
      'method.response.header.X-Request-Id': 'context.requestId',
    });
    expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual({
      error: 'Method Not Allowed',
      message: `Method not allowed; this resource accepts ${allowed}`,
    });
  });
});

describe('CORS', () => {
  it('answers no preflight: OPTIONS falls to the 405 and no method returns CORS headers', () => {
    expect(Object.keys(methods).filter((key) => key.startsWith('OPTIONS '))).toEqual([]);
    expect(JSON.stringify(synth.template.toJSON())).not.toContain('Access-Control-Allow');
  });
});

describe('the stage’s web ACL: the embed page limited per client address', () => {
  it('blocks one source address over 1,000 embed page loads in 5 minutes with a 429 page, and lets the rest pass', () => {
    const [acl] = Object.values(resources(synth.template, 'AWS::WAFv2::WebACL'));
    expect(acl.Properties.Scope).toBe('REGIONAL');
    expect(acl.Properties.DefaultAction).toEqual({ Allow: {} });
    expect(acl.Properties.Rules).toHaveLength(1);
    const [rule] = acl.Properties.Rules;
    expect(rule.Statement.RateBasedStatement).toEqual({
      Limit: EMBED_PAGE_CLIENT_LIMIT.requests,
      EvaluationWindowSec: EMBED_PAGE_CLIENT_LIMIT.windowSeconds,
      AggregateKeyType: 'IP',
      ScopeDownStatement: {
        ByteMatchStatement: {
          FieldToMatch: { UriPath: {} },
          PositionalConstraint: 'ENDS_WITH',
          SearchString: '/embed',
          TextTransformations: [{ Priority: 0, Type: 'NONE' }],
        },
      },
    });
    const response = rule.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(429);
    expect(response.ResponseHeaders).toEqual([{ Name: 'Retry-After', Value: '60' }]);
    expect(acl.Properties.CustomResponseBodies[response.CustomResponseBodyKey]).toEqual({
      ContentType: 'TEXT_HTML',
      Content: CLIENT_LIMITED_RESPONSE.body,
    });
  });

  it('keeps no sampled request, whose URI and headers would hold tokens and API keys', () => {
    const [acl] = Object.values(resources(synth.template, 'AWS::WAFv2::WebACL'));
    const configs = [
      acl.Properties.VisibilityConfig,
      ...acl.Properties.Rules.map((r: Json) => r.VisibilityConfig),
    ];
    for (const config of configs) expect(config.SampledRequestsEnabled).toBe(false);
  });

  it('is associated with the API’s stage', () => {
    const [id] = Object.keys(resources(synth.template, 'AWS::WAFv2::WebACL'));
    const [association] = Object.values(resources(synth.template, 'AWS::WAFv2::WebACLAssociation'));
    expect(association.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [id, 'Arn'] });
    const stageId = Object.keys(resources(synth.template, 'AWS::ApiGateway::Stage'))[0];
    expect(JSON.stringify(association.Properties.ResourceArn)).toContain(`"Ref":"${stageId}"`);
  });

  it('takes the limit from the embedPageRateLimit context key, and associates an operator’s own web ACL instead of making one', () => {
    const arn =
      'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab';
    const limited = synthesize({ context: { embedPageRateLimit: 200 } });
    const own = synthesize({ context: { webAclArn: arn } });
    try {
      const [acl] = Object.values(resources(limited.template, 'AWS::WAFv2::WebACL'));
      expect(acl.Properties.Rules[0].Statement.RateBasedStatement.Limit).toBe(200);
      expect(resources(own.template, 'AWS::WAFv2::WebACL')).toEqual({});
      const [association] = Object.values(resources(own.template, 'AWS::WAFv2::WebACLAssociation'));
      expect(association.Properties.WebACLArn).toBe(arn);
    } finally {
      limited.dispose();
      own.dispose();
    }
  });
});

describe('provisioned concurrency of the embed page', () => {
  const EMBED_ROUTES = ROUTES.filter((route) => route.function === 'embedPage');
  const integrationOf = (template: Synthesized['template'], route: (typeof ROUTES)[number]) =>
    JSON.stringify(methodsByRoute(template)[label(route)].Properties.Integration.Uri);

  it('is off by default: no alias, API Gateway invokes the function itself', () => {
    expect(resources(synth.template, 'AWS::Lambda::Alias')).toEqual({});
    for (const route of EMBED_ROUTES)
      expect(integrationOf(synth.template, route)).toContain(functionId('embedPage'));
  });

  it('keeps the embedPageProvisionedConcurrency environments initialized behind an alias that the embed routes invoke', () => {
    const provisioned = synthesize({ context: { embedPageProvisionedConcurrency: 3 } });
    try {
      const aliases = Object.entries(resources(provisioned.template, 'AWS::Lambda::Alias'));
      expect(aliases).toHaveLength(1);
      const [aliasId, alias] = aliases[0] as [string, Json];
      expect(alias.Properties.ProvisionedConcurrencyConfig).toEqual({ ProvisionedConcurrentExecutions: 3 });
      const embedFunction = functionByDescription(provisioned.template, FUNCTIONS.embedPage.description)[0];
      expect(alias.Properties.FunctionName).toEqual({ Ref: embedFunction });
      expect(EMBED_ROUTES.length).toBeGreaterThan(0);
      for (const route of EMBED_ROUTES) expect(integrationOf(provisioned.template, route)).toContain(aliasId);
      // Every other route still invokes its function directly.
      const other = ROUTES.find((route) => route.function !== 'embedPage') as (typeof ROUTES)[number];
      expect(integrationOf(provisioned.template, other)).not.toContain(aliasId);
    } finally {
      provisioned.dispose();
    }
  });
});

describe('hardening of the stage', () => {
  const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1234-5678-9abc-def012345678';
  const restApiOf = (template: Synthesized['template']) =>
    Object.values(resources(template, 'AWS::ApiGateway::RestApi'))[0];

  it('disables the default execute-api endpoint once a custom domain is the way in, unless told not to', () => {
    expect(restApiOf(synth.template).Properties.DisableExecuteApiEndpoint).toBeFalsy();
    const domain = { customDomainName: 'embed.example.com', certificateArn: CERTIFICATE };
    const withDomain = synthesize({ context: domain });
    const keptOpen = synthesize({ context: { ...domain, disableExecuteApiEndpoint: false } });
    try {
      expect(restApiOf(withDomain.template).Properties.DisableExecuteApiEndpoint).toBe(true);
      expect(restApiOf(keptOpen.template).Properties.DisableExecuteApiEndpoint).toBeFalsy();
    } finally {
      withDomain.dispose();
      keptOpen.dispose();
    }
  });

  it('owns the account-wide API Gateway logging setting by default, and leaves it to another stack when told', () => {
    expect(Object.keys(resources(synth.template, 'AWS::ApiGateway::Account'))).toHaveLength(1);
    const shared = synthesize({ context: { apiGatewayAccountRole: false } });
    try {
      expect(resources(shared.template, 'AWS::ApiGateway::Account')).toEqual({});
      // Access logs still go to the stage's own log group.
      const [stage] = Object.values(resources(shared.template, 'AWS::ApiGateway::Stage'));
      expect(stage.Properties.AccessLogSetting.DestinationArn).toBeDefined();
    } finally {
      shared.dispose();
    }
  });
});
