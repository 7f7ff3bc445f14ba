import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#lib/definitions/routes';
import type { Json, Synthesized } from '#test/support/infra';
import { methodsByRoute, resources, synthesize } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const label = (route: (typeof ROUTES)[number]) => `${route.method} ${route.path}`;
const API_KEY_ROUTES = ROUTES.filter((route) => route.auth === 'apiKey').map(label);

const synth = useSynthesized();
let methods: Record<string, Json>;

beforeAll(() => {
  methods = methodsByRoute(synth.template);
});

const onlyPlan = (template: Synthesized['template']) => {
  const all = Object.values(resources(template, 'AWS::ApiGateway::UsagePlan'));
  expect(all).toHaveLength(1);
  return all[0].Properties;
};

describe('per-key throttling: the API', () => {
  it('takes the API key from the authorizer’s usageIdentifierKey, never from a header a client sets', () => {
    const [api] = Object.values(resources(synth.template, 'AWS::ApiGateway::RestApi'));
    expect(api.Properties.ApiKeySourceType).toBe('AUTHORIZER');
  });

  it.each(API_KEY_ROUTES)('requires an API key on %s, which puts it under the usage plans', (route) => {
    expect(methods[route].Properties.ApiKeyRequired).toBe(true);
  });

  it('requires one on no other method: open routes and the 405 mocks are never refused for want of a key', () => {
    const others = Object.keys(methods).filter((route) => !API_KEY_ROUTES.includes(route));
    expect(others.length).toBeGreaterThan(0);
    for (const route of others) expect(methods[route].Properties.ApiKeyRequired, route).toBeFalsy();
  });

  it('creates no API Gateway API key: the admin CLI makes one per key, so the template holds none', () => {
    expect(resources(synth.template, 'AWS::ApiGateway::ApiKey')).toEqual({});
    expect(resources(synth.template, 'AWS::ApiGateway::UsagePlanKey')).toEqual({});
  });
});

describe('per-key throttling: the default usage plan', () => {
  it('is one plan, named after the stage, bound to this API’s stage', () => {
    const plan = onlyPlan(synth.template);
    const [apiId] = Object.keys(resources(synth.template, 'AWS::ApiGateway::RestApi'));
    const [stageId] = Object.keys(resources(synth.template, 'AWS::ApiGateway::Stage'));
    expect(plan.UsagePlanName).toBe('embed-session-prod');
    expect(plan.ApiStages).toHaveLength(1);
    expect(plan.ApiStages[0]).toMatchObject({ ApiId: { Ref: apiId }, Stage: { Ref: stageId } });
  });

  it('throttles each key at 50 requests per second with bursts of 100 by default', () => {
    expect(onlyPlan(synth.template).Throttle).toEqual({ RateLimit: 50, BurstLimit: 100 });
  });

  it('sets no quota: keys are throttled, never cut off for the rest of a period', () => {
    expect(onlyPlan(synth.template).Quota).toBeUndefined();
  });

  it('throttles at apiKeyRateLimit and apiKeyBurstLimit from context', () => {
    const override = synthesize({ context: { apiKeyRateLimit: '7', apiKeyBurstLimit: 21 } });
    try {
      expect(onlyPlan(override.template).Throttle).toEqual({ RateLimit: 7, BurstLimit: 21 });
    } finally {
      override.dispose();
    }
  });
});
