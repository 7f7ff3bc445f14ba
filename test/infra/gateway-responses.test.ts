import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonTemplate } from '../../infra/constructs/api';
import { GATEWAY_RESPONSES, type GatewayResponseType } from '../../lib/gateway-responses';
import { statusName } from '../../lib/http/status';
import { type Json, resources, type Synthesized, synthesize } from './support';

const TYPES = Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[];

let synth: Synthesized;
let byType: Record<string, Json>;

beforeAll(() => {
  synth = synthesize();
  byType = Object.fromEntries(
    Object.values(resources(synth.template, 'AWS::ApiGateway::GatewayResponse')).map((r) => [
      r.Properties.ResponseType,
      r.Properties,
    ]),
  );
});
afterAll(() => synth?.dispose());

describe('gateway responses', () => {
  it('defines a response for every gateway-made error of lib/gateway-responses.ts, and no other', () => {
    expect(Object.keys(byType).sort()).toEqual([...TYPES].sort());
  });

  it.each(TYPES)('answers %s with its status code', (type) => {
    expect(byType[type].StatusCode).toBe(String(GATEWAY_RESPONSES[type].status));
  });

  it.each(TYPES)('answers %s with a JSON {"error", "message"} body in the house shape', (type) => {
    const { status, message } = GATEWAY_RESPONSES[type];
    const template = byType[type].ResponseTemplates['application/json'];
    expect(JSON.parse(template)).toEqual({ error: statusName(status), message });
  });

  it.each(TYPES)('labels %s as application/json', (type) => {
    expect(byType[type].ResponseParameters).toEqual({
      'gatewayresponse.header.Content-Type': "'application/json'",
    });
  });

  it.each(TYPES)('keeps the %s template free of VTL syntax', (type) => {
    expect(byType[type].ResponseTemplates['application/json']).not.toMatch(/[$#]/);
  });

  it('reports an unknown route (missing authentication token) as 404 Not Found', () => {
    expect(byType.MISSING_AUTHENTICATION_TOKEN.StatusCode).toBe('404');
    expect(JSON.parse(byType.MISSING_AUTHENTICATION_TOKEN.ResponseTemplates['application/json']).error).toBe(
      'Not Found',
    );
  });

  it('reports a missing or invalid API key as 401 Unauthorized', () => {
    expect(byType.UNAUTHORIZED.StatusCode).toBe('401');
    expect(JSON.parse(byType.UNAUTHORIZED.ResponseTemplates['application/json'])).toEqual({
      error: 'Unauthorized',
      message: 'The API key is missing or invalid',
    });
  });

  it('reports a failing authorizer as 503, never as a bad key', () => {
    expect(byType.AUTHORIZER_FAILURE.StatusCode).toBe('503');
  });
});

describe('JSON mapping templates', () => {
  it('escapes VTL characters so the template stays valid JSON with the same value', () => {
    const value = { error: 'Bad Request', message: 'costs $5 #1 \\$x "quoted" $context.path #set($a=1)' };
    const template = jsonTemplate(value);
    expect(template).not.toMatch(/[$#]/);
    expect(JSON.parse(template)).toEqual(value);
  });
});
