import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UsagePlanKeys } from '#lib/adapters/api-gateway/api-gateway-keys';
import { DependencyUnavailableError } from '#lib/domain/errors';
import { awsClientSettings, withCallPolicy } from '#lib/platform/aws-clients';

/** API Gateway's control plane as a test server: it records each request and answers from `answer`. */
const seen: { method: string; url: string; authorization: string; body: string }[] = [];
let answer: (method: string, url: string) => { status: number; body?: unknown; errorType?: string } = () => ({
  status: 200,
});
let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization ?? '',
        body,
      });
      const { status, body: out, errorType } = answer(req.method ?? '', req.url ?? '');
      // API Gateway names an error's type in this header, as the SDK reads it.
      res
        .writeHead(status, {
          'Content-Type': 'application/json',
          ...(errorType ? { 'x-amzn-ErrorType': errorType } : {}),
        })
        .end(out === undefined ? '' : JSON.stringify(out));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => server.close());
beforeEach(() => {
  seen.length = 0;
});

/** The SDK's client under the one call policy, at the test server, with one attempt so nothing waits. */
const keys = () =>
  new UsagePlanKeys(
    withCallPolicy(
      new APIGatewayClient({
        ...awsClientSettings({ region: 'eu-west-1', endpoint }),
        credentials: { accessKeyId: 'AKIATEST', secretAccessKey: 'secret' },
        maxAttempts: 1,
      }),
    ),
    { name: 'embed-session-prod' },
  );

describe('the provisioning function’s usage plan keys', () => {
  it('creates the key’s API Gateway key and adds it to the default plan, found by name, each call signed', async () => {
    answer = (method, url) => {
      if (method === 'GET' && url.startsWith('/apikeys')) return { status: 200, body: { item: [] } };
      if (method === 'POST' && url === '/apikeys') return { status: 201, body: { id: 'ak-1' } };
      if (method === 'GET' && url.startsWith('/usageplans'))
        return {
          status: 200,
          body: {
            item: [
              { id: 'other', name: 'x' },
              { id: 'plan-1', name: 'embed-session-prod' },
            ],
          },
        };
      return { status: 201, body: {} };
    };
    await keys().register('key_abc');
    expect(seen.map(({ method, url }) => `${method} ${url.split('?')[0]}`)).toEqual([
      'GET /apikeys',
      'POST /apikeys',
      'GET /usageplans',
      'POST /usageplans/plan-1/keys',
    ]);
    expect(JSON.parse(seen[1]?.body ?? '{}')).toMatchObject({
      name: 'usage_key_abc',
      value: 'usage_key_abc',
      enabled: true,
    });
    expect(JSON.parse(seen[3]?.body ?? '{}')).toEqual({ keyId: 'ak-1', keyType: 'API_KEY' });
    for (const request of seen)
      expect(request.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIATEST\/\d{8}\/eu-west-1\/apigateway\/aws4_request/,
      );
  });

  it('takes a key already in the plan (409) as registered: a retry converges', async () => {
    answer = (method, url) => {
      if (method === 'GET' && url.startsWith('/apikeys'))
        return { status: 200, body: { item: [{ id: 'ak-1', name: 'usage_key_abc' }] } };
      if (method === 'GET')
        return { status: 200, body: { item: [{ id: 'plan-1', name: 'embed-session-prod' }] } };
      return { status: 409, body: { message: 'already in plan' }, errorType: 'ConflictException' };
    };
    await expect(keys().register('key_abc')).resolves.toBeUndefined();
    expect(seen.map(({ method }) => method)).toEqual(['GET', 'GET', 'POST']);
  });

  it('takes the API key another registration created meanwhile (409 on create) and puts that one in the plan', async () => {
    let lookups = 0;
    answer = (method, url) => {
      if (method === 'GET' && url.startsWith('/apikeys')) {
        lookups += 1;
        // The first lookup misses the key that a concurrent first request of the same key creates.
        return { status: 200, body: { item: lookups === 1 ? [] : [{ id: 'ak-7', name: 'usage_key_abc' }] } };
      }
      if (method === 'POST' && url === '/apikeys')
        return { status: 409, body: { message: 'API Key already exists' }, errorType: 'ConflictException' };
      if (method === 'GET')
        return { status: 200, body: { item: [{ id: 'plan-1', name: 'embed-session-prod' }] } };
      return { status: 201, body: {} };
    };
    await expect(keys().register('key_abc')).resolves.toBeUndefined();
    expect(seen.map(({ method, url }) => `${method} ${url.split('?')[0]}`)).toEqual([
      'GET /apikeys',
      'POST /apikeys',
      'GET /apikeys',
      'GET /usageplans',
      'POST /usageplans/plan-1/keys',
    ]);
    expect(JSON.parse(seen.at(-1)?.body ?? '{}')).toMatchObject({ keyId: 'ak-7', keyType: 'API_KEY' });
  });

  it('deletes the key’s API Gateway key on revocation, and does nothing for a key it never had', async () => {
    answer = (method) =>
      method === 'GET'
        ? { status: 200, body: { item: [{ id: 'ak-9', name: 'usage_key_abc' }] } }
        : { status: 202 };
    await keys().remove('key_abc');
    expect(seen.map(({ method, url }) => `${method} ${url.split('?')[0]}`)).toEqual([
      'GET /apikeys',
      'DELETE /apikeys/ak-9',
      // Looking for a plan of its own, which a key under the defaults does not have.
      'GET /usageplans',
    ]);
    seen.length = 0;
    answer = () => ({ status: 200, body: { item: [] } });
    await keys().remove('key_abc');
    expect(seen.filter(({ method }) => method !== 'GET')).toEqual([]);
  });

  it('reports throttling or a failing API Gateway as a dependency that is unavailable', async () => {
    answer = () => ({
      status: 429,
      body: { message: 'Too Many Requests' },
      errorType: 'TooManyRequestsException',
    });
    await expect(keys().remove('key_abc')).rejects.toBeInstanceOf(DependencyUnavailableError);
  });
});

describe('the provisioning function’s revocation of a key with limits of its own', () => {
  it('deletes the key’s own usage plan too (detached from its stage first), so no plan is left orphaned', async () => {
    answer = (method, url) => {
      if (method === 'GET' && url.startsWith('/apikeys'))
        return { status: 200, body: { item: [{ id: 'ak-9', name: 'usage_key_abc' }] } };
      if (method === 'GET' && url.startsWith('/usageplans'))
        return {
          status: 200,
          body: {
            item: [
              { id: 'plan-1', name: 'embed-session-prod', apiStages: [{ apiId: 'api-1', stage: 'prod' }] },
              {
                id: 'plan-own',
                name: 'embed-session-prod-key_abc',
                apiStages: [{ apiId: 'api-1', stage: 'prod' }],
              },
            ],
          },
        };
      return { status: method === 'DELETE' ? 202 : 200, body: {} };
    };
    await keys().remove('key_abc');
    const writes = seen.filter(({ method }) => method !== 'GET');
    expect(writes.map(({ method, url }) => `${method} ${url.split('?')[0]}`)).toEqual([
      'DELETE /apikeys/ak-9',
      'PATCH /usageplans/plan-own',
      'DELETE /usageplans/plan-own',
    ]);
    expect(JSON.parse(writes[1]?.body ?? '{}')).toEqual({
      patchOperations: [{ op: 'remove', path: '/apiStages', value: 'api-1:prod' }],
    });
  });
});
