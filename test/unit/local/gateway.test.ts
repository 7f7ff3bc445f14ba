import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { GATEWAY_RESPONSES } from '#lib/adapters/http/gateway-responses';
import { CLIENT_LIMITED_RESPONSE } from '#lib/definitions/rate-limits';
import type { FunctionName } from '#lib/definitions/routes';
import { createGateway, type LambdaHandler, policyAllows } from '#local/gateway';
import { ClientRateLimiter } from '#local/rate-limiter';
import { manualMonotonicClock } from '#test/support/fakes';
import type { AuthorizerHandler, ProxyHandler } from '#test/support/harness';
import { memoryLogger } from '#test/support/logs';
import { rawGet } from '#test/support/raw-http';

/** Region, account, API id and stage of the local gateway: `local`, a zero account, `local`, `local`. */
const ARN_PREFIX = 'arn:aws:execute-api:local:000000000000:local/local';
const CREATE_ARN = `${ARN_PREFIX}/POST/api/embed/sessions`;
const EMBED_ARN = `${ARN_PREFIX}/GET/embed`;

function policy(
  statements: Array<{ Effect: string; Action?: string | string[]; Resource?: string | string[] }>,
): APIGatewayAuthorizerResult {
  return {
    principalId: 'owner-1',
    policyDocument: { Version: '2012-10-17', Statement: statements as never },
  };
}

const allow = (Resource: string | string[], Action: string | string[] = 'execute-api:Invoke') => ({
  Effect: 'Allow',
  Action,
  Resource,
});
const deny = (Resource: string | string[], Action: string | string[] = 'execute-api:Invoke') => ({
  Effect: 'Deny',
  Action,
  Resource,
});

describe('policyAllows', () => {
  it('allows any method of the API with a wildcard resource', () => {
    const wildcard = policy([allow(`${ARN_PREFIX}/*`)]);
    expect(policyAllows(wildcard, CREATE_ARN)).toBe(true);
    expect(policyAllows(wildcard, EMBED_ARN)).toBe(true);
    expect(policyAllows(policy([allow('*')]), CREATE_ARN)).toBe(true);
  });

  it('matches an exact resource for its own method and path only', () => {
    const exact = policy([allow(CREATE_ARN)]);
    expect(policyAllows(exact, CREATE_ARN)).toBe(true);
    expect(policyAllows(exact, `${ARN_PREFIX}/GET/api/embed/sessions`)).toBe(false);
    expect(policyAllows(exact, EMBED_ARN)).toBe(false);
    expect(policyAllows(exact, `${CREATE_ARN}/extra`)).toBe(false);
  });

  it('matches a method wildcard and a single-character wildcard', () => {
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/*/api/embed/sessions`)]), CREATE_ARN)).toBe(true);
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/???/embed`)]), EMBED_ARN)).toBe(true);
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/??/embed`)]), EMBED_ARN)).toBe(false);
  });

  it('lets an explicit Deny win over an Allow, in either order', () => {
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/*`), deny(CREATE_ARN)]), CREATE_ARN)).toBe(false);
    expect(policyAllows(policy([deny(CREATE_ARN), allow(`${ARN_PREFIX}/*`)]), CREATE_ARN)).toBe(false);
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/*`), deny(CREATE_ARN)]), EMBED_ARN)).toBe(true);
  });

  it.each([
    ['execute-api:Invoke', true],
    ['execute-api:*', true],
    ['*', true],
    [['s3:GetObject', 'execute-api:Invoke'], true],
    ['execute-api:ManageConnections', false],
    ['s3:GetObject', false],
    [[], false],
  ])('with the action %j allows: %s', (action, allowed) => {
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/*`, action)]), CREATE_ARN)).toBe(allowed);
  });

  it('ignores a Deny whose action is not execute-api', () => {
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/*`), deny('*', 's3:*')]), CREATE_ARN)).toBe(true);
  });

  it('does not match a resource of another API, stage, account or region', () => {
    for (const resource of [
      'arn:aws:execute-api:local:000000000000:other/local/*',
      'arn:aws:execute-api:local:000000000000:local/prod/*',
      'arn:aws:execute-api:local:111111111111:local/local/*',
      'arn:aws:execute-api:us-east-1:000000000000:local/local/*',
    ]) {
      expect(policyAllows(policy([allow(resource)]), CREATE_ARN)).toBe(false);
    }
  });

  it('treats regular-expression characters in a resource literally', () => {
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/GET/embed.`)]), `${ARN_PREFIX}/GET/embedX`)).toBe(false);
    expect(policyAllows(policy([allow(`${ARN_PREFIX}/GET/(embed|health)`)]), EMBED_ARN)).toBe(false);
  });

  it('accepts a list of resources', () => {
    expect(policyAllows(policy([allow([EMBED_ARN, CREATE_ARN])]), CREATE_ARN)).toBe(true);
  });

  it('denies when no statement allows', () => {
    expect(policyAllows(policy([]), CREATE_ARN)).toBe(false);
    expect(policyAllows(policy([{ Effect: 'Maybe', Action: '*', Resource: '*' }]), CREATE_ARN)).toBe(false);
  });
});

const allowAll: APIGatewayAuthorizerResult = {
  ...policy([allow(`${ARN_PREFIX}/*`)]),
  context: { userId: 'owner-1', keyId: 'key_abc' },
  usageIdentifierKey: 'usage_key_abc',
};

/** Limits high enough that no test but the throttling ones ever meets them. */
const GENEROUS = { rate: 10_000, burst: 5_000 };
/** The embed page's per-client limit of the shared gateway: no test of another rule reaches it. */
const UNLIMITED_CLIENTS = { requests: 1_000_000, windowSeconds: 60, pathSuffix: '/embed' };
/** The rate limiter's clock: it stands still, so only the tests that move it see a refill. */
const clock = manualMonotonicClock();

const ok = (body: unknown = { ok: true }): APIGatewayProxyResult => ({
  statusCode: 200,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

const handlers = {
  createSession: vi.fn<ProxyHandler>(),
  listSessions: vi.fn<ProxyHandler>(),
  getSession: vi.fn<ProxyHandler>(),
  revokeSession: vi.fn<ProxyHandler>(),
  revokeUserSessions: vi.fn<ProxyHandler>(),
  listEvents: vi.fn<ProxyHandler>(),
  createWebhook: vi.fn<ProxyHandler>(),
  listWebhooks: vi.fn<ProxyHandler>(),
  deleteWebhook: vi.fn<ProxyHandler>(),
  rotateWebhookSecret: vi.fn<ProxyHandler>(),
  authorizer: vi.fn<AuthorizerHandler>(),
  provisioning: vi.fn<ProxyHandler>(),
  embedPage: vi.fn<ProxyHandler>(),
  embedScript: vi.fn<ProxyHandler>(),
  health: vi.fn<ProxyHandler>(),
  docs: vi.fn<ProxyHandler>(),
  discovery: vi.fn<ProxyHandler>(),
} satisfies Record<FunctionName, unknown>;

/** Stand-ins for the CSP and referrer headers the runtime derives from its configuration. */
const SECURITY_HEADERS = { 'Content-Security-Policy': "frame-ancestors 'test'", 'Referrer-Policy': 'test' };

let server: Server;
let baseUrl: string;
let logs: ReturnType<typeof memoryLogger>;

beforeAll(async () => {
  logs = memoryLogger();
  server = createServer(
    createGateway({
      handlers: handlers as unknown as Record<FunctionName, LambdaHandler>,
      domainName: 'gateway.test:1234',
      logger: logs.logger,
      securityHeaders: SECURITY_HEADERS,
      apiKeyLimits: GENEROUS,
      clientLimit: UNLIMITED_CLIENTS,
      clock,
    }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});
beforeEach(() => {
  for (const handler of Object.values(handlers)) handler.mockReset();
  handlers.authorizer.mockResolvedValue(allowAll);
  for (const name of [
    'createSession',
    'listSessions',
    'getSession',
    'revokeSession',
    'revokeUserSessions',
  ] as const) {
    handlers[name].mockResolvedValue(ok());
  }
  handlers.embedPage.mockResolvedValue(ok());
  handlers.health.mockResolvedValue(ok({ status: 'ok' }));
});

const post = (body: string | Uint8Array = '{}', headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}/api/embed/sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer esk_test', ...headers },
    body,
  });

async function expectGatewayError(response: Response, type: keyof typeof GATEWAY_RESPONSES) {
  const { status, message } = GATEWAY_RESPONSES[type];
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  for (const [name, value] of Object.entries({ ...SECURITY_HEADERS, ...GATEWAY_RESPONSES[type].headers })) {
    expect(response.headers.get(name)).toBe(value);
  }
  // Every gateway-made answer names its request, as the stack maps `context.requestId`.
  expect(response.headers.get('x-request-id')).toMatch(/^[\w-]{8,}$/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.message).toBe(message);
  return body;
}

/** The single event a mocked function received. */
function onlyEvent(handler: typeof handlers.createSession): APIGatewayProxyEvent {
  expect(handler).toHaveBeenCalledTimes(1);
  return handler.mock.calls[0]?.[0] as APIGatewayProxyEvent;
}

describe('local gateway: routing', () => {
  it('answers 404 JSON for an unknown path without invoking anything', async () => {
    const body = await expectGatewayError(await fetch(`${baseUrl}/nope`), 'MISSING_AUTHENTICATION_TOKEN');
    expect(body.error).toBe('Not Found');
    for (const handler of Object.values(handlers)) expect(handler).not.toHaveBeenCalled();
  });

  it('answers 405 JSON with an Allow header for a known path and another method', async () => {
    const response = await fetch(`${baseUrl}/api/embed/sessions`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('content-security-policy')).toBe(SECURITY_HEADERS['Content-Security-Policy']);
    expect(await response.json()).toEqual({
      error: 'Method Not Allowed',
      message: 'Method not allowed; this resource accepts GET, POST',
    });
    const embed = await fetch(`${baseUrl}/embed`, { method: 'DELETE' });
    expect(embed.status).toBe(405);
    expect(embed.headers.get('allow')).toBe('GET, HEAD');
    for (const handler of Object.values(handlers)) expect(handler).not.toHaveBeenCalled();
  });

  it('binds a {id} path parameter, URL-decoded, in the event it passes the function', async () => {
    const response = await fetch(`${baseUrl}/api/embed/sessions/abc%20d`, {
      headers: { Authorization: 'Bearer esk_test' },
    });
    expect(response.status).toBe(200);
    const event = onlyEvent(handlers.getSession);
    expect(event.pathParameters).toEqual({ id: 'abc d' });
    expect(event.resource).toBe('/api/embed/sessions/{id}');
    expect(event.path).toBe('/api/embed/sessions/abc%20d');
  });

  it('prefers a literal segment to {id}: GET on /sessions/revoke is that resource’s 405, not a session', async () => {
    const response = await fetch(`${baseUrl}/api/embed/sessions/revoke`, {
      headers: { Authorization: 'Bearer esk_test' },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(handlers.getSession).not.toHaveBeenCalled();
    const revoke = await fetch(`${baseUrl}/api/embed/sessions/revoke`, {
      method: 'POST',
      headers: { Authorization: 'Bearer esk_test' },
    });
    expect(revoke.status).toBe(200);
    expect(onlyEvent(handlers.revokeUserSessions).pathParameters).toBeNull();
  });

  it('routes a nested resource under {id}, and knows no deeper path', async () => {
    const response = await fetch(`${baseUrl}/api/embed/sessions/s-1/revoke`, {
      method: 'POST',
      headers: { Authorization: 'Bearer esk_test' },
    });
    expect(response.status).toBe(200);
    expect(onlyEvent(handlers.revokeSession).pathParameters).toEqual({ id: 's-1' });
    await expectGatewayError(
      await fetch(`${baseUrl}/api/embed/sessions/s-1/revoke/x`, { method: 'POST' }),
      'MISSING_AUTHENTICATION_TOKEN',
    );
    await expectGatewayError(
      await fetch(`${baseUrl}/api/embed/sessions//revoke`),
      'MISSING_AUTHENTICATION_TOKEN',
    );
  });

  it('hands the authorizer the method ARN of the actual path', async () => {
    await fetch(`${baseUrl}/api/embed/sessions/s-9`, { headers: { Authorization: 'Bearer esk_test' } });
    expect(handlers.authorizer.mock.calls[0]?.[0].methodArn).toMatch(/\/GET\/api\/embed\/sessions\/s-9$/);
  });

  it('invokes a route without authorizer directly, with a null authorizer context', async () => {
    const response = await fetch(`${baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(handlers.authorizer).not.toHaveBeenCalled();
    expect(onlyEvent(handlers.health).requestContext.authorizer).toBeNull();
  });
});

describe('local gateway: the TOKEN authorizer', () => {
  it('answers 401 without invoking the authorizer when the Authorization header is missing', async () => {
    const response = await fetch(`${baseUrl}/api/embed/sessions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    const body = await expectGatewayError(response, 'UNAUTHORIZED');
    expect(body.error).toBe('Unauthorized');
    expect(handlers.authorizer).not.toHaveBeenCalled();
    expect(handlers.createSession).not.toHaveBeenCalled();
  });

  it('passes the Authorization header and the method ARN as a TOKEN event', async () => {
    await post('{}', { Authorization: 'Bearer esk_abc' });
    expect(handlers.authorizer).toHaveBeenCalledTimes(1);
    const [event, context] = handlers.authorizer.mock.calls[0] ?? [];
    expect(event).toEqual({ type: 'TOKEN', authorizationToken: 'Bearer esk_abc', methodArn: CREATE_ARN });
    expect(context?.functionName).toBe('authorizer');
  });

  it('answers 401 when the authorizer throws exactly Unauthorized', async () => {
    handlers.authorizer.mockRejectedValue(new Error('Unauthorized'));
    await expectGatewayError(await post(), 'UNAUTHORIZED');
    expect(handlers.createSession).not.toHaveBeenCalled();
  });

  it.each([
    ['another error', () => Promise.reject(new Error('DynamoDB is down'))],
    ['a non-Error rejection', () => Promise.reject('boom')],
    ['a policy without principalId', async () => ({ ...allowAll, principalId: '' })],
    ['no policy document', async () => ({ principalId: 'owner-1' }) as APIGatewayAuthorizerResult],
    ['nothing', async () => undefined as unknown as APIGatewayAuthorizerResult],
  ])(
    'answers 503 AUTHORIZER_FAILURE when the authorizer gives %s, never letting the request through',
    async (_l, impl) => {
      handlers.authorizer.mockImplementation(impl);
      const body = await expectGatewayError(await post(), 'AUTHORIZER_FAILURE');
      expect(body.error).toBe('Service Unavailable');
      expect(handlers.createSession).not.toHaveBeenCalled();
    },
  );

  it('answers 401 "The API key is invalid" when the policy denies the method', async () => {
    handlers.authorizer.mockResolvedValue({ ...allowAll, ...policy([deny(`${ARN_PREFIX}/*`)]) });
    const body = await expectGatewayError(await post(), 'ACCESS_DENIED');
    expect(body).toEqual({ error: 'Unauthorized', message: 'The API key is invalid' });
    expect(handlers.createSession).not.toHaveBeenCalled();
  });

  it('answers ACCESS_DENIED when the policy allows only another method', async () => {
    handlers.authorizer.mockResolvedValue({ ...allowAll, ...policy([allow(EMBED_ARN)]) });
    await expectGatewayError(await post(), 'ACCESS_DENIED');
    expect(handlers.createSession).not.toHaveBeenCalled();
  });

  it('runs the authorizer on every request: no caching, so a revoked key is refused at once', async () => {
    expect((await post()).status).toBe(200);
    handlers.authorizer.mockRejectedValue(new Error('Unauthorized'));
    expect((await post()).status).toBe(401);
    expect(handlers.authorizer).toHaveBeenCalledTimes(2);
  });
});

describe('local gateway: the v1 proxy event', () => {
  it('carries the authorizer context and principalId in requestContext.authorizer', async () => {
    await post('{"a":1}');
    const event = onlyEvent(handlers.createSession);
    expect(event.requestContext.authorizer).toEqual({
      userId: 'owner-1',
      keyId: 'key_abc',
      principalId: 'owner-1',
    });
  });

  it('describes the request as API Gateway does', async () => {
    await post('{"a":1}');
    const event = onlyEvent(handlers.createSession);
    const context = handlers.createSession.mock.calls[0]?.[1];
    expect(event).toMatchObject({
      resource: '/api/embed/sessions',
      path: '/api/embed/sessions',
      httpMethod: 'POST',
      body: '{"a":1}',
      isBase64Encoded: false,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: null,
      stageVariables: null,
    });
    expect(event.requestContext).toMatchObject({
      domainName: 'gateway.test:1234',
      stage: 'local',
      httpMethod: 'POST',
      resourcePath: '/api/embed/sessions',
      path: '/local/api/embed/sessions',
    });
    expect(context?.awsRequestId).toBe(event.requestContext.requestId);
    expect(context?.functionName).toBe('createSession');
    expect(context?.memoryLimitInMB).toBe('512');
    expect(context?.getRemainingTimeInMillis()).toBeGreaterThan(19_000);
    expect(context?.getRemainingTimeInMillis()).toBeLessThanOrEqual(20_000);
  });

  it('passes the headers as sent, names in their original case', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${baseUrl}/embed?token=abc`, {
        method: 'GET',
        headers: { 'X-Custom-Header': 'one', accept: 'application/json' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    const event = onlyEvent(handlers.embedPage);
    expect(event.headers['X-Custom-Header']).toBe('one');
    expect(event.headers.accept).toBe('application/json');
    expect(event.multiValueHeaders['X-Custom-Header']).toEqual(['one']);
    expect(event.body).toBeNull();
  });

  it('passes query parameters, the last value winning and every value in the multi-value map', async () => {
    await fetch(`${baseUrl}/embed?token=T0k&x=1&x=2&e=a%20b`);
    const event = onlyEvent(handlers.embedPage);
    expect(event.queryStringParameters).toEqual({ token: 'T0k', x: '2', e: 'a b' });
    expect(event.multiValueQueryStringParameters).toEqual({ token: ['T0k'], x: ['1', '2'], e: ['a b'] });
    expect(event.path).toBe('/embed');
  });

  describe('names of what every object inherits are ordinary names', () => {
    const INHERITED_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

    it.each(INHERITED_NAMES)(
      'passes a query parameter named %s, once and twice, as any other',
      async (name) => {
        const response = await fetch(`${baseUrl}/embed?token=T0k&${name}=1&${name}=2`);
        expect(response.status).toBe(200);
        const event = onlyEvent(handlers.embedPage);
        expect(Object.hasOwn(event.queryStringParameters ?? {}, name)).toBe(true);
        expect(event.queryStringParameters?.[name]).toBe('2');
        expect(event.multiValueQueryStringParameters?.[name]).toEqual(['1', '2']);
        expect(event.queryStringParameters?.token).toBe('T0k');
        // The maps stay plain objects: nothing a caller names changes what they inherit.
        expect(Object.getPrototypeOf(event.queryStringParameters)).toBe(Object.prototype);
      },
    );

    it.each(INHERITED_NAMES)('passes a header named %s, sent twice, as any other', async (name) => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${baseUrl}/embed?token=abc`, { method: 'GET' });
        req.setHeader(name, ['one', 'two']);
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
      const event = onlyEvent(handlers.embedPage);
      expect(Object.hasOwn(event.headers, name)).toBe(true);
      expect(event.headers[name]).toBe('two');
      expect(event.multiValueHeaders[name]).toEqual(['one', 'two']);
      expect(Object.getPrototypeOf(event.headers)).toBe(Object.prototype);
    });

    it('authorizes a protected route whose request carries such names', async () => {
      const response = await post('{}', { constructor: 'x', toString: 'y' });
      expect(response.status).toBe(200);
      expect(onlyEvent(handlers.createSession).headers.constructor).toBe('x');
    });
  });

  it('sends back the status, headers and body of the function', async () => {
    handlers.embedPage.mockResolvedValue({
      statusCode: 418,
      headers: { 'Content-Type': 'text/html; charset=utf-8', 'X-One': 'a' },
      multiValueHeaders: { 'Set-Cookie': ['a=1', 'b=2'] },
      body: '<p>teapot</p>',
    });
    const response = await fetch(`${baseUrl}/embed`);
    expect(response.status).toBe(418);
    expect(response.headers.get('x-one')).toBe('a');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.text()).toBe('<p>teapot</p>');
  });

  it('decodes a base64-encoded function body', async () => {
    handlers.health.mockResolvedValue({
      statusCode: 200,
      headers: {},
      body: Buffer.from('binary ✓').toString('base64'),
      isBase64Encoded: true,
    });
    expect(await (await fetch(`${baseUrl}/health`)).text()).toBe('binary ✓');
  });
});

describe('local gateway: per-key throttling', () => {
  /** An Allow policy naming `usageId`, with the key's own limits of `rate`/s and `burst`. */
  const limitedPolicy = (usageId: string, rate: number | string = 1, burst: number | string = 2) => ({
    ...allowAll,
    context: { userId: 'owner-1', keyId: 'key_abc', rateLimit: rate, burstLimit: burst },
    usageIdentifierKey: usageId,
  });
  const get = (authorization: string) =>
    fetch(`${baseUrl}/api/embed/sessions/s-1`, { headers: { Authorization: authorization } });

  it('answers 429 THROTTLED with Retry-After and the RateLimit headers once the key’s burst is spent', async () => {
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_spent'));
    expect((await get('Bearer esk_1')).status).toBe(200);
    expect((await get('Bearer esk_1')).status).toBe(200);
    const refused = await get('Bearer esk_1');
    const body = await expectGatewayError(refused, 'THROTTLED');
    expect(body).toEqual({ error: 'Too Many Requests', message: 'Too many requests; slow down and retry' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-limit')).toBe('2');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe('2');
    expect(handlers.getSession).toHaveBeenCalledTimes(2);
  });

  it('throttles by the usage identifier the authorizer names, never by the Authorization header', async () => {
    // Two different headers, one key: one bucket. Keying on the header would let each have its own.
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_one_key'));
    expect((await get('Bearer esk_first-spelling')).status).toBe(200);
    expect((await get('bearer  esk_first-spelling')).status).toBe(200);
    expect((await get('Bearer esk_first-spelling ')).status).toBe(429);
    // Another usage identifier has its own full bucket.
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_other_key'));
    const other = await get('Bearer esk_first-spelling');
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('1');
  });

  it('refills the key’s bucket at its rate', async () => {
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_refill'));
    for (let i = 0; i < 2; i++) await get('Bearer esk_1');
    expect((await get('Bearer esk_1')).status).toBe(429);
    clock.advance(1000);
    const refilled = await get('Bearer esk_1');
    expect(refilled.status).toBe(200);
    expect(refilled.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('adds the RateLimit headers to whatever the function answers, its errors included', async () => {
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_errors', 1, 5));
    handlers.getSession.mockResolvedValue({ statusCode: 404, headers: { 'X-Own': 'kept' }, body: '{}' });
    const response = await get('Bearer esk_1');
    expect(response.status).toBe(404);
    expect(response.headers.get('x-own')).toBe('kept');
    expect(response.headers.get('ratelimit-limit')).toBe('5');
    expect(response.headers.get('ratelimit-remaining')).toBe('4');
    expect(response.headers.get('ratelimit-reset')).toBe('1');
    expect(response.headers.get('retry-after')).toBeNull();
  });

  it('adds them to the gateway’s own errors after the authorizer too (a function that crashed)', async () => {
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_crash', 1, 5));
    handlers.getSession.mockRejectedValue(new Error('boom'));
    const response = await get('Bearer esk_1');
    await expectGatewayError(response, 'INTEGRATION_FAILURE');
    expect(response.headers.get('ratelimit-limit')).toBe('5');
  });

  it('uses the gateway’s default limits for a key without its own', async () => {
    handlers.authorizer.mockResolvedValue({ ...allowAll, usageIdentifierKey: 'usage_defaults' });
    const response = await get('Bearer esk_1');
    expect(response.headers.get('ratelimit-limit')).toBe(String(GENEROUS.burst));
    expect(response.headers.get('ratelimit-remaining')).toBe(String(GENEROUS.burst - 1));
  });

  it('reads the key’s own limits when the context carries them as strings, as API Gateway passes them on', async () => {
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_strings', '1', '3'));
    expect((await get('Bearer esk_1')).headers.get('ratelimit-limit')).toBe('3');
  });

  it.each([
    ['only one of the two', { rateLimit: 1 }],
    ['a burst of 0', { rateLimit: 1, burstLimit: 0 }],
    ['text', { rateLimit: 'fast', burstLimit: 'many' }],
  ])('falls back to the defaults when the context has %s', async (_name, limits) => {
    handlers.authorizer.mockResolvedValue({
      ...allowAll,
      context: { userId: 'owner-1', keyId: 'key_abc', ...limits },
      usageIdentifierKey: `usage_bad_${_name}`,
    });
    expect((await get('Bearer esk_1')).headers.get('ratelimit-limit')).toBe(String(GENEROUS.burst));
  });

  it('answers 401 INVALID_API_KEY, as API Gateway does, when the authorizer names no usage identifier', async () => {
    handlers.authorizer.mockResolvedValue({ ...allowAll, usageIdentifierKey: undefined });
    const response = await get('Bearer esk_1');
    await expectGatewayError(response, 'INVALID_API_KEY');
    expect(response.headers.get('ratelimit-limit')).toBeNull();
    expect(handlers.getSession).not.toHaveBeenCalled();
  });

  it('adds no RateLimit headers where no key is involved: open routes and refused keys', async () => {
    expect((await fetch(`${baseUrl}/health`)).headers.get('ratelimit-limit')).toBeNull();
    expect((await fetch(`${baseUrl}/embed?token=x`)).headers.get('ratelimit-limit')).toBeNull();
    handlers.authorizer.mockRejectedValue(new Error('Unauthorized'));
    expect((await get('Bearer esk_1')).headers.get('ratelimit-limit')).toBeNull();
  });

  it('passes the key’s own limits on to the function in the authorizer context, as API Gateway does', async () => {
    handlers.authorizer.mockResolvedValue(limitedPolicy('usage_context', 1, 4));
    await get('Bearer esk_1');
    expect(onlyEvent(handlers.getSession).requestContext.authorizer).toMatchObject({
      rateLimit: 1,
      burstLimit: 4,
    });
  });
});

describe('local gateway: the embed page limited per client address, as the web ACL does', () => {
  it('refuses a client over its limit in the window with the 429 page, before the function runs, and lets it in again once the window has passed', async () => {
    const limit = { requests: 3, windowSeconds: 60, pathSuffix: '/embed' };
    const own = manualMonotonicClock();
    const limited = createServer(
      createGateway({
        handlers: handlers as unknown as Record<FunctionName, LambdaHandler>,
        domainName: 'gateway.test:1234',
        logger: logs.logger,
        securityHeaders: SECURITY_HEADERS,
        apiKeyLimits: GENEROUS,
        clientLimit: limit,
        clock: own,
      }),
    );
    limited.listen(0, '127.0.0.1');
    await once(limited, 'listening');
    const base = `http://127.0.0.1:${(limited.address() as AddressInfo).port}`;
    try {
      handlers.embedPage.mockResolvedValue({ statusCode: 200, body: 'board' });
      const statuses: number[] = [];
      for (let i = 0; i < limit.requests; i++)
        statuses.push((await fetch(`${base}/embed?token=t${i}`)).status);
      expect(statuses).toEqual([200, 200, 200]);
      const refused = await fetch(`${base}/embed?token=over`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe(String(CLIENT_LIMITED_RESPONSE.retryAfterSeconds));
      expect(refused.headers.get('content-type')).toBe(CLIENT_LIMITED_RESPONSE.contentType);
      expect(await refused.text()).toBe(CLIENT_LIMITED_RESPONSE.body);
      expect(handlers.embedPage).toHaveBeenCalledTimes(limit.requests);
      // Other routes are not counted, nor limited.
      handlers.health.mockResolvedValue({ statusCode: 200, body: '{}' });
      expect((await fetch(`${base}/health`)).status).toBe(200);
      // Two windows later nothing of the earlier ones is left.
      own.advance(2 * limit.windowSeconds * 1000);
      expect((await fetch(`${base}/embed?token=again`)).status).toBe(200);
    } finally {
      limited.closeAllConnections();
      limited.close();
    }
  });
});

describe('ClientRateLimiter, the estimate of a sliding window', () => {
  it('weights the previous window by how much of it still overlaps the last windowSeconds', () => {
    const now = manualMonotonicClock();
    const limiter = new ClientRateLimiter({ requests: 10, windowSeconds: 10, pathSuffix: '/embed' }, now);
    for (let i = 0; i < 10; i++) expect(limiter.take('a')).toBe(true);
    expect(limiter.take('a')).toBe(false);
    expect(limiter.take('b')).toBe(true);
    // Half into the next window: half of the previous 11 still count, so 5 more fit, not 10.
    now.advance(15_000);
    const passed = Array.from({ length: 10 }, () => limiter.take('a')).filter(Boolean).length;
    expect(passed).toBe(5);
  });

  it('counts only paths that end with its suffix', () => {
    const limiter = new ClientRateLimiter({ requests: 1, windowSeconds: 60, pathSuffix: '/embed' });
    expect(limiter.counts('/prod/embed')).toBe(true);
    expect(limiter.counts('/embed')).toBe(true);
    expect(limiter.counts('/embed.js')).toBe(false);
    expect(limiter.counts('/embed/ended')).toBe(false);
  });
});

describe('local gateway: failures', () => {
  it('answers 502 JSON without the error when the function throws', async () => {
    handlers.createSession.mockRejectedValue(new Error('secret internal detail'));
    const response = await post();
    const body = await expectGatewayError(response, 'INTEGRATION_FAILURE');
    expect(body.error).toBe('Bad Gateway');
    expect(JSON.stringify(body)).not.toContain('secret internal detail');
  });

  it('answers 502 when the function returns no proxy result', async () => {
    handlers.health.mockResolvedValue({ body: 'x' } as unknown as APIGatewayProxyResult);
    await expectGatewayError(await fetch(`${baseUrl}/health`), 'INTEGRATION_FAILURE');
  });

  it('accepts a body of exactly 6 MB', async () => {
    const response = await post(new Uint8Array(6 * 1024 * 1024).fill(0x20));
    expect(response.status).toBe(200);
    expect(onlyEvent(handlers.createSession).body).toHaveLength(6 * 1024 * 1024);
  });

  it('answers 413 for a body over 6 MB without invoking the function', async () => {
    const response = await post(new Uint8Array(6 * 1024 * 1024 + 1).fill(0x20));
    const body = await expectGatewayError(response, 'REQUEST_TOO_LARGE');
    expect(body.error).toBe('Payload Too Large');
    expect(handlers.createSession).not.toHaveBeenCalled();
  });

  it('runs the authorizer before the 6 MB Lambda payload limit, as API Gateway does', async () => {
    handlers.authorizer.mockRejectedValue(new Error('Unauthorized'));
    const response = await post(new Uint8Array(6 * 1024 * 1024 + 1).fill(0x20));
    await expectGatewayError(response, 'UNAUTHORIZED');
    expect(handlers.createSession).not.toHaveBeenCalled();
  });

  it('answers 413 for a body over API Gateway’s 10 MB limit, without reading it all', async () => {
    const response = await post(new Uint8Array(11 * 1024 * 1024).fill(0x20));
    await expectGatewayError(response, 'REQUEST_TOO_LARGE');
    expect(handlers.createSession).not.toHaveBeenCalled();
  });

  it('logs each request by path, never with its query string', async () => {
    const token = 'Secret_Token-0123456789abcdefghi';
    await fetch(`${baseUrl}/embed?token=${token}`);
    const line = logs.lines().findLast((entry) => entry.message === 'request');
    expect(line).toMatchObject({ method: 'GET', path: '/embed', status: 200 });
    expect(line?.requestId).toBe(onlyEvent(handlers.embedPage).requestContext.requestId);
    expect(JSON.stringify(logs.lines())).not.toContain(token);
  });
});

describe('local gateway: request targets that are not URLs', () => {
  it.each(['//[', '/%zz%', '//a:99999/x'])(
    'answers GET %s with the 404 JSON of an unknown route, and logs it by its raw path',
    async (target) => {
      const { port } = new URL(baseUrl);
      const response = await rawGet('127.0.0.1', Number(port), target);
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toBe('application/json');
      expect(JSON.parse(response.body)).toEqual({ error: 'Not Found', message: 'No such route' });
      const line = logs.lines().findLast((entry) => entry.message === 'request');
      expect(line).toMatchObject({ method: 'GET', path: target, status: 404 });
    },
  );

  it('answers 400 JSON for a target that is not a path at all', async () => {
    const { port } = new URL(baseUrl);
    const response = await rawGet('127.0.0.1', Number(port), 'http://[/x');
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'Bad Request' });
  });
});
