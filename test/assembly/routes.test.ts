/**
 * The routes the HTTP integration suites do not call on the assembly, each called once with a request
 * whose answer needs its function's own code: a function that cannot start answers 502 here, and the
 * run's route coverage (test/assembly/route-coverage.ts) fails when a route is added that no test calls.
 * KMS is not emulated on the assembly, so the webhook routes are called where no KMS call is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testTarget } from '#test/support/local-runtime';
import { provisioningCall } from '#test/support/provisioning';
import { startAssemblyTestRuntime } from './fixture';
import type { AssemblyRuntime } from './runtime';

const onAssembly = testTarget() === 'assembly';

describe.runIf(onAssembly)('every route of the template, reached on the assembly', () => {
  let runtime: AssemblyRuntime;
  beforeAll(async () => {
    runtime = await startAssemblyTestRuntime();
  });
  afterAll(() => runtime?.close());

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${runtime.baseUrl}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${runtime.demo?.apiKey}`, ...init.headers },
    });

  it('lists the caller’s events: GET /api/embed/events', async () => {
    const response = await api('/api/embed/events');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: expect.any(Array) });
  });

  it('lists the caller’s events of one type through the type index: GET /api/embed/events?type=', async () => {
    const response = await api('/api/embed/events?type=session.created');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: expect.any(Array), nextCursor: null });
  });

  it('lists the caller’s webhook endpoints, none yet: GET /api/embed/webhooks', async () => {
    const response = await api('/api/embed/webhooks');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: [], nextCursor: null });
  });

  it('answers 404 for an endpoint the caller does not have: DELETE /api/embed/webhooks/{id}', async () => {
    const response = await api('/api/embed/webhooks/wh_00000000000000000000000000', { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: 'Not Found' });
  });

  it('refuses an endpoint URL that is not https before any secret is made: POST /api/embed/webhooks', async () => {
    const response = await api('/api/embed/webhooks', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'ftp://receiver.example.com/hook' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'Bad Request' });
  });

  // The API key routes of the provisioning API: the HTTP suite issues and revokes keys off the assembly
  // only (API Gateway's usage plans are not emulated), so these reach the function without that call.
  it('lists API keys for a signed caller: GET /admin/api-keys', async () => {
    const response = await provisioningCall(runtime, 'GET', `/admin/api-keys?userId=${runtime.demo?.userId}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [expect.objectContaining({ keyId: runtime.demo?.keyId })] });
  });

  it('refuses a key request without a user before issuing anything: POST /admin/api-keys', async () => {
    const response = await provisioningCall(runtime, 'POST', '/admin/api-keys', { name: 'no owner' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'Bad Request' });
  });

  it('answers 404 for a key that does not exist: POST /admin/api-keys/{keyId}/revoke', async () => {
    const response = await provisioningCall(
      runtime,
      'POST',
      '/admin/api-keys/key_000000000000000000000000/revoke',
      {
        endSessions: true,
      },
    );
    expect(response.status).toBe(404);
  });

  it('serves the board applications’ script: GET /embed-board.js', async () => {
    const response = await fetch(`${runtime.baseUrl}/embed-board.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
  });

  it('names the stage as the ID tokens’ issuer: GET /.well-known/openid-configuration', async () => {
    const response = await fetch(`${runtime.baseUrl}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      issuer: runtime.publicBaseUrl,
      jwks_uri: `${runtime.publicBaseUrl}/.well-known/jwks.json`,
    });
  });

  it('answers the JWKS from the signing keys, or a 503 with Retry-After when KMS cannot be reached: GET /.well-known/jwks.json', async () => {
    const response = await fetch(`${runtime.baseUrl}/.well-known/jwks.json`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await response.json()).toMatchObject({ error: 'Service Unavailable' });
  });

  it('serves the index, the reference page and its assets: GET /, GET /docs, GET /docs/{asset}', async () => {
    expect((await fetch(`${runtime.baseUrl}/`, { headers: { Accept: 'text/html' } })).status).toBe(200);
    const page = await fetch(`${runtime.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const asset = await fetch(`${runtime.baseUrl}/docs/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(100_000);
  });
});

describe.runIf(!onAssembly)(
  'every route on the assembly (skipped: runs under `npm run test:assembly`)',
  () => {
    it.skip('reaches every route of the template; see npm run test:assembly', () => {});
  },
);
