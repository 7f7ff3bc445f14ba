import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ApiModel, createApiGateway, type Invoke } from '#local/gateway';
import { manualMonotonicClock } from '#test/support/fakes';
import { memoryLogger } from '#test/support/logs';

/**
 * The shared emulator of API Gateway driven by an API model, as the assembly runner builds one from a
 * template: a stage served under its own path, the authorizer's identity header and result cache, and the
 * usage plan's key source.
 */
const ARN = 'arn:aws:execute-api:eu-west-1:123456789012:api-1/prod';

function model(overrides: Partial<ApiModel> = {}): ApiModel {
  return {
    routes: [
      { method: 'POST', path: '/things', function: 'Create', auth: 'apiKey', apiKeyRequired: true },
      { method: 'GET', path: '/open', function: 'Open', auth: 'none' },
    ],
    stage: 'prod',
    basePath: '/prod',
    accountId: '123456789012',
    region: 'eu-west-1',
    apiId: 'api-1',
    authorizer: { function: 'Authorizer', identityHeader: 'X-Key', resultTtlSeconds: 300 },
    apiKeySource: 'AUTHORIZER',
    apiKeyLimits: { rate: 1000, burst: 1000 },
    clientLimit: undefined,
    response: (type) => ({
      status: type === 'UNAUTHORIZED' ? 401 : 499,
      headers: {},
      body: JSON.stringify({ type }),
    }),
    methodNotAllowed: () => undefined,
    ...overrides,
  };
}

const allowStage: APIGatewayAuthorizerResult = {
  principalId: 'owner',
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${ARN}/*` }],
  },
  context: { userId: 'owner', keyId: 'k' },
  usageIdentifierKey: 'usage-k',
};

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  if (server) await once(server, 'close');
  server = undefined;
});

async function serve(api: ApiModel, invoke: Invoke, clock = manualMonotonicClock()): Promise<string> {
  server = createServer(
    createApiGateway({ api, invoke, domainName: 'api.test', logger: memoryLogger().logger, clock }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function fakeFunctions(policy: APIGatewayAuthorizerResult = allowStage) {
  return vi.fn<Invoke>(async (name, event) => {
    if (name === 'Authorizer') return policy;
    const proxy = event as APIGatewayProxyEvent;
    return {
      statusCode: 200,
      body: JSON.stringify({ name, path: proxy.path, stage: proxy.requestContext.stage }),
    };
  });
}

describe('the API Gateway emulator on an API model', () => {
  it('serves the stage under its base path, and nothing outside it', async () => {
    const invoke = fakeFunctions();
    const base = await serve(model(), invoke);
    const inside = await fetch(`${base}/prod/open`);
    expect(await inside.json()).toEqual({ name: 'Open', path: '/open', stage: 'prod' });
    const outside = await fetch(`${base}/open`);
    expect(await outside.json()).toEqual({ type: 'MISSING_AUTHENTICATION_TOKEN' });
  });

  it('reads the identity from the header the identity source names', async () => {
    const invoke = fakeFunctions();
    const base = await serve(model(), invoke);
    expect(
      (await fetch(`${base}/prod/things`, { method: 'POST', headers: { Authorization: 'k' } })).status,
    ).toBe(401);
    expect((await fetch(`${base}/prod/things`, { method: 'POST', headers: { 'X-Key': 'k' } })).status).toBe(
      200,
    );
    expect(invoke.mock.calls[0]?.[1]).toMatchObject({
      authorizationToken: 'k',
      methodArn: `${ARN}/POST/things`,
    });
  });

  it('caches the returned policy per identity for the result TTL, then runs the authorizer again', async () => {
    const invoke = fakeFunctions();
    const clock = manualMonotonicClock();
    const base = await serve(model(), invoke, clock);
    const post = () => fetch(`${base}/prod/things`, { method: 'POST', headers: { 'X-Key': 'k' } });
    await post();
    await post();
    const authorizerRuns = () => invoke.mock.calls.filter(([name]) => name === 'Authorizer').length;
    expect(authorizerRuns()).toBe(1);
    clock.advance(300_000);
    await post();
    expect(authorizerRuns()).toBe(2);
  });

  it('runs the authorizer on every request when the TTL is 0', async () => {
    const invoke = fakeFunctions();
    const base = await serve(
      model({ authorizer: { function: 'Authorizer', identityHeader: 'X-Key', resultTtlSeconds: 0 } }),
      invoke,
    );
    for (let i = 0; i < 2; i++)
      await fetch(`${base}/prod/things`, { method: 'POST', headers: { 'X-Key': 'k' } });
    expect(invoke.mock.calls.filter(([name]) => name === 'Authorizer')).toHaveLength(2);
  });

  it('applies a cached policy to each request’s own method ARN, as API Gateway does', async () => {
    const onlyOther: APIGatewayAuthorizerResult = {
      ...allowStage,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${ARN}/GET/other` }],
      },
    };
    const base = await serve(model(), fakeFunctions(onlyOther));
    const response = await fetch(`${base}/prod/things`, { method: 'POST', headers: { 'X-Key': 'k' } });
    expect(await response.json()).toEqual({ type: 'ACCESS_DENIED' });
  });

  it('takes the usage plan key from x-api-key when the key source is HEADER', async () => {
    const base = await serve(model({ apiKeySource: 'HEADER' }), fakeFunctions());
    const without = await fetch(`${base}/prod/things`, { method: 'POST', headers: { 'X-Key': 'k' } });
    expect(await without.json()).toEqual({ type: 'INVALID_API_KEY' });
    const withKey = await fetch(`${base}/prod/things`, {
      method: 'POST',
      headers: { 'X-Key': 'k', 'x-api-key': 'plan-key' },
    });
    expect(withKey.status).toBe(200);
  });
});
