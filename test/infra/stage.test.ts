import { beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_LOG_FIELDS } from '#infra/constructs/api';
import type { Json } from '#test/support/infra';
import { resources, synthesize } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const synth = useSynthesized();
let stage: Json;
let settings: Json;

beforeAll(() => {
  [stage] = Object.values(resources(synth.template, 'AWS::ApiGateway::Stage'));
  [settings] = stage.Properties.MethodSettings;
});

describe('API stage', () => {
  it('is named after the stageName context (default prod)', () => {
    expect(stage.Properties.StageName).toBe('prod');
  });

  it('applies one method setting to every method', () => {
    expect(stage.Properties.MethodSettings).toHaveLength(1);
    expect(settings).toMatchObject({ HttpMethod: '*', ResourcePath: '/*' });
  });

  it('throttles at the default rate and burst', () => {
    expect(settings.ThrottlingRateLimit).toBe(100);
    expect(settings.ThrottlingBurstLimit).toBe(200);
  });

  it('throttles the unauthenticated embed page too: the stage-wide setting covers every method', () => {
    // One setting for HttpMethod * on /*, so GET /embed cannot escape throttling.
    expect(settings.ThrottlingRateLimit).toBeGreaterThan(0);
    expect(
      stage.Properties.MethodSettings.every((m: Json) => m.HttpMethod === '*' && m.ResourcePath === '/*'),
    ).toBe(true);
  });

  it('throttles at the rate and burst from context', () => {
    const override = synthesize({ context: { throttleRateLimit: '12.5', throttleBurstLimit: 25 } });
    try {
      override.template.hasResourceProperties('AWS::ApiGateway::Stage', {
        MethodSettings: [{ ThrottlingRateLimit: 12.5, ThrottlingBurstLimit: 25 }],
      });
    } finally {
      override.dispose();
    }
  });

  it('keeps execution logging and data tracing off, metrics on', () => {
    expect(settings.DataTraceEnabled).toBe(false);
    expect(settings.LoggingLevel).toBe('OFF');
    expect(settings.MetricsEnabled).toBe(true);
    expect(stage.Properties.TracingEnabled).toBe(false);
  });

  it('sets no API Gateway cache (responses carry fresh tokens)', () => {
    expect(stage.Properties.CacheClusterEnabled).toBeUndefined();
    expect(settings.CachingEnabled).toBeUndefined();
  });
});

describe('access logs', () => {
  const format = (): string => stage.Properties.AccessLogSetting.Format;

  it('writes to the access log group, which has a retention', () => {
    const logGroups = resources(synth.template, 'AWS::Logs::LogGroup');
    const destination = JSON.stringify(stage.Properties.AccessLogSetting.DestinationArn);
    const [id] = Object.keys(logGroups).filter((logicalId) => destination.includes(`"Ref":"${logicalId}"`));
    expect(id).toBeDefined();
    expect(logGroups[id as string].Properties.RetentionInDays).toBe(30);
  });

  it('logs one JSON object per request with the request id', () => {
    const fields = JSON.parse(format());
    expect(fields).toEqual(ACCESS_LOG_FIELDS);
    expect(fields.requestId).toBe('$context.requestId');
  });

  it('records method, route template, status, latencies, size and caller ip', () => {
    expect(JSON.parse(format())).toMatchObject({
      httpMethod: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
      responseLength: '$context.responseLength',
      integrationLatency: '$context.integrationLatency',
      ip: '$context.identity.sourceIp',
      requestTime: '$context.requestTime',
    });
  });

  it('records neither headers nor query strings nor the raw path (the token travels in the query string)', () => {
    const text = format();
    expect(text).not.toMatch(/\$context\.path\b/);
    expect(text).not.toMatch(
      /header|querystring|queryString|\$input|\$method\.request|userAgent|requestOverride/i,
    );
    for (const value of Object.values(JSON.parse(text) as Record<string, string>)) {
      expect(value).toMatch(/^\$context\.[A-Za-z.]+$/);
    }
  });
});

describe('account logging role', () => {
  it('sets the account-level API Gateway logging role that access logs need, and keeps it', () => {
    const [account] = Object.values(resources(synth.template, 'AWS::ApiGateway::Account'));
    const roleId = account.Properties.CloudWatchRoleArn['Fn::GetAtt'][0];
    const role = resources(synth.template, 'AWS::IAM::Role')[roleId];
    expect(role.DeletionPolicy).toBe('Retain');
    expect(role.Properties.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({
      Service: 'apigateway.amazonaws.com',
    });
  });
});
