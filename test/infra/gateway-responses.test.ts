import { beforeAll, describe, expect, it } from 'vitest';
import { jsonTemplate } from '#infra/constructs/api-mapping';
import type { Json } from '#test/support/infra';
import { resources, synthesize } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

/**
 * What a client must receive for each error API Gateway makes itself, written out here rather than read
 * from lib/adapters/http/gateway-responses.ts, so a wrong entry in that table fails this test.
 */
const EXPECTED: Record<
  string,
  { status: string; error: string; message?: string; retryAfter?: string; bearer?: boolean }
> = {
  ACCESS_DENIED: { status: '401', error: 'Unauthorized', message: 'The API key is invalid', bearer: true },
  API_CONFIGURATION_ERROR: { status: '500', error: 'Internal Server Error' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: '503', error: 'Service Unavailable', retryAfter: '2' },
  AUTHORIZER_FAILURE: { status: '503', error: 'Service Unavailable', retryAfter: '2' },
  BAD_REQUEST_BODY: { status: '400', error: 'Bad Request' },
  BAD_REQUEST_PARAMETERS: { status: '400', error: 'Bad Request' },
  DEFAULT_4XX: { status: '400', error: 'Bad Request' },
  DEFAULT_5XX: { status: '500', error: 'Internal Server Error' },
  EXPIRED_TOKEN: {
    status: '403',
    error: 'Forbidden',
    message: 'The request was signed with expired credentials',
  },
  INTEGRATION_FAILURE: { status: '502', error: 'Bad Gateway' },
  INTEGRATION_TIMEOUT: { status: '504', error: 'Gateway Timeout' },
  INVALID_API_KEY: { status: '401', error: 'Unauthorized', message: 'The API key is invalid', bearer: true },
  INVALID_SIGNATURE: { status: '403', error: 'Forbidden', message: 'The request signature does not verify' },
  MISSING_AUTHENTICATION_TOKEN: { status: '404', error: 'Not Found', message: 'No such route' },
  QUOTA_EXCEEDED: { status: '429', error: 'Too Many Requests' },
  REQUEST_TOO_LARGE: { status: '413', error: 'Payload Too Large' },
  RESOURCE_NOT_FOUND: { status: '404', error: 'Not Found', message: 'No such route' },
  THROTTLED: { status: '429', error: 'Too Many Requests', retryAfter: '1' },
  UNAUTHORIZED: {
    status: '401',
    error: 'Unauthorized',
    message: 'Send your API key as `Authorization: Bearer <key>`',
    bearer: true,
  },
  UNSUPPORTED_MEDIA_TYPE: { status: '415', error: 'Unsupported Media Type' },
  WAF_FILTERED: { status: '403', error: 'Forbidden' },
};
const TYPES = Object.keys(EXPECTED);

const synth = useSynthesized();
let byType: Record<string, Json>;

beforeAll(() => {
  byType = Object.fromEntries(
    Object.values(resources(synth.template, 'AWS::ApiGateway::GatewayResponse')).map((r) => [
      r.Properties.ResponseType,
      r.Properties,
    ]),
  );
});

const bodyOf = (type: string) => JSON.parse(byType[type].ResponseTemplates['application/json']);

describe('gateway responses', () => {
  it('customizes every response type API Gateway has, so none keeps its default body', () => {
    expect(Object.keys(byType).sort()).toEqual([...TYPES].sort());
  });

  it.each(TYPES)('answers %s with its status code', (type) => {
    expect(byType[type].StatusCode).toBe(EXPECTED[type]?.status);
  });

  it.each(TYPES)('answers %s with exactly {"error": <status name>, "message": <text>}', (type) => {
    const body = bodyOf(type);
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe(EXPECTED[type]?.error);
    expect(typeof body.message).toBe('string');
    expect(body.message.length).toBeGreaterThan(0);
    if (EXPECTED[type]?.message) expect(body.message).toBe(EXPECTED[type]?.message);
  });

  it.each(TYPES)('sends %s as uncacheable JSON with the house headers', (type) => {
    const expected: Record<string, string> = {
      'gatewayresponse.header.Content-Type': "'application/json'",
      'gatewayresponse.header.Cache-Control': "'no-store'",
      'gatewayresponse.header.X-Content-Type-Options': "'nosniff'",
      // The embed page's rules, since /embed can be answered by the gateway too; no quote inside.
      'gatewayresponse.header.Content-Security-Policy':
        "'sandbox; frame-ancestors https: http://localhost:* http://127.0.0.1:*'",
      'gatewayresponse.header.Referrer-Policy': "'no-referrer'",
      // API Gateway's request id, as the functions' answers carry it.
      'gatewayresponse.header.X-Request-Id': 'context.requestId',
    };
    if (EXPECTED[type]?.bearer) expected['gatewayresponse.header.WWW-Authenticate'] = "'Bearer'";
    const retryAfter = EXPECTED[type]?.retryAfter;
    if (retryAfter) expected['gatewayresponse.header.Retry-After'] = `'${retryAfter}'`;
    expect(byType[type].ResponseParameters).toEqual(expected);
  });

  it.each(TYPES)('keeps the %s template free of VTL syntax', (type) => {
    expect(byType[type].ResponseTemplates['application/json']).not.toMatch(/[$#]/);
  });

  it('frames gateway errors only where allowedEmbedOrigins lets the embed page be framed', () => {
    const override = synthesize({ context: { allowedEmbedOrigins: ['https://app.example.com'] } });
    try {
      const [throttled] = Object.values(
        resources(override.template, 'AWS::ApiGateway::GatewayResponse'),
      ).filter((r) => r.Properties.ResponseType === 'THROTTLED');
      expect(throttled.Properties.ResponseParameters['gatewayresponse.header.Content-Security-Policy']).toBe(
        "'sandbox; frame-ancestors https://app.example.com'",
      );
    } finally {
      override.dispose();
    }
  });

  it.each(['AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR'])(
    'tells a caller whose authorizer failed (%s) to retry, without blaming the key',
    (type) => {
      expect(bodyOf(type).message).not.toMatch(/key/i);
    },
  );
});

describe('JSON mapping templates', () => {
  it('escapes VTL characters so the template stays valid JSON with the same value', () => {
    const value = { error: 'Bad Request', message: 'costs $5 #1 \\$x "quoted" $context.path #set($a=1)' };
    const template = jsonTemplate(value);
    expect(template).not.toMatch(/[$#]/);
    expect(JSON.parse(template)).toEqual(value);
  });
});
