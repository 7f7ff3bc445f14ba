import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_DEFINITIONS, type ServiceDefinitions } from '#infra/definitions';
import { FUNCTIONS, ROUTES } from '#lib/definitions/routes';
import type { Json } from '#test/support/infra';
import {
  dynamoGrants,
  functionByDescription,
  methodsByRoute,
  resources,
  roleStatements,
  synthesize,
  tableLogicalIds,
} from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

/**
 * A route table that grows the way lib/definitions/routes.ts will: a new function on a new open path, and a second
 * method on an existing key-protected path. The stack must follow with no code change.
 */
const GROWN: ServiceDefinitions = {
  ...SERVICE_DEFINITIONS,
  functions: {
    ...FUNCTIONS,
    reports: {
      entry: 'functions/health.ts',
      description: 'GET /reports/daily: test-only function',
      access: { sessions: ['Query'], boards: ['GetItem'] },
      queries: { sessions: ['board-index'] },
      settings: [],
    },
  },
  routes: [
    ...ROUTES,
    { method: 'GET', path: '/reports/daily', function: 'reports', auth: 'none' },
    { method: 'POST', path: '/api/embed/sessions/{id}', function: 'reports', auth: 'apiKey' },
  ],
};

const synth = useSynthesized({ definitions: GROWN });
let methods: Record<string, Json>;

beforeAll(() => {
  methods = methodsByRoute(synth.template);
});

describe('a grown route table', () => {
  it('gets a function for the new definition, with its tables and least-privilege grants', () => {
    const [, fn] = functionByDescription(synth.template, 'GET /reports/daily: test-only function');
    const variables = fn.Properties.Environment.Variables;
    expect(
      Object.keys(variables)
        .filter((v) => v.endsWith('_TABLE'))
        .sort(),
    ).toEqual(['BOARDS_TABLE', 'SESSIONS_TABLE']);
    const grants = dynamoGrants(
      roleStatements(synth.template, fn.Properties.Role['Fn::GetAtt'][0]),
      tableLogicalIds(synth.template),
    );
    expect(grants).toEqual(['GetItem on boards', 'Query on sessions/index/board-index']);
  });

  it("serves the new auth 'none' route without an authorizer, with its own 405", () => {
    expect(methods['GET /reports/daily'].Properties.AuthorizationType).toBe('NONE');
    expect(methods['GET /reports/daily'].Properties.AuthorizerId).toBeUndefined();
    expect(
      methods['ANY /reports/daily'].Properties.Integration.IntegrationResponses[0].ResponseParameters,
    ).toMatchObject({
      'method.response.header.Allow': "'GET'",
    });
  });

  it('leaves the intermediate /reports resource without methods (a 404 from the gateway)', () => {
    expect(Object.keys(methods).filter((key) => key.endsWith(' /reports'))).toEqual([]);
  });

  it('puts the authorizer on a new apiKey method and lists both methods in Allow', () => {
    const [authorizerId] = Object.keys(resources(synth.template, 'AWS::ApiGateway::Authorizer'));
    expect(methods['POST /api/embed/sessions/{id}'].Properties.AuthorizerId).toEqual({ Ref: authorizerId });
    expect(
      methods['ANY /api/embed/sessions/{id}'].Properties.Integration.IntegrationResponses[0]
        .ResponseParameters['method.response.header.Allow'],
    ).toBe("'GET, POST'");
  });

  it('watches the new function with error and throttle alarms', () => {
    const [id] = functionByDescription(synth.template, 'GET /reports/daily: test-only function');
    const alarms = Object.values(resources(synth.template, 'AWS::CloudWatch::Alarm')).filter(
      (a) => a.Properties.Dimensions?.[0]?.Value?.Ref === id,
    );
    expect(alarms.map((a) => a.Properties.MetricName).sort()).toEqual(['Errors', 'Throttles']);
  });

  it('stays free of cdk-nag findings', () => {
    const report = new AwsSolutionsChecks().validateScope(synth.app);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });
});

describe('route table edge cases', () => {
  it('creates no authorizer when no route needs an API key', () => {
    const open = synthesize({
      definitions: { ...SERVICE_DEFINITIONS, routes: ROUTES.filter((route) => route.auth === 'none') },
    });
    try {
      open.template.resourceCountIs('AWS::ApiGateway::Authorizer', 0);
    } finally {
      open.dispose();
    }
  });

  it('fails synthesis when a function queries a table without naming its indexes, or names one that does not exist', () => {
    const withQueries = (queries: Record<string, string[]> | undefined) => ({
      ...SERVICE_DEFINITIONS,
      functions: {
        ...FUNCTIONS,
        reports: {
          entry: 'functions/health.ts',
          description: 'test-only',
          access: { sessions: ['Query'] as const },
          ...(queries ? { queries } : {}),
          settings: [],
        },
      },
    });
    expect(() => synthesize({ definitions: withQueries(undefined) })).toThrowError(
      "Query on the sessions table needs the indexes it uses in the function definition's queries",
    );
    expect(() => synthesize({ definitions: withQueries({ sessions: ['nope-index'] }) })).toThrowError(
      'The sessions table has no index nope-index',
    );
  });

  it('fails synthesis with a clear message when a route names an unknown function', () => {
    expect(() =>
      synthesize({
        definitions: {
          ...SERVICE_DEFINITIONS,
          routes: [{ method: 'GET', path: '/nowhere', function: 'missing', auth: 'none' }],
        },
      }),
    ).toThrowError('No function named "missing"');
  });
});
