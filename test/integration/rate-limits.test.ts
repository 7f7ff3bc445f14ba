import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { main } from '#admin/cli';
import { manualMonotonicClock } from '#test/support/fakes';
import { apiCall, type CallResult, call, keyOwner } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

/** One request per second, bursts of three: small enough to reach in a test, with room to see it fall. */
const LIMITS = { rate: 1, burst: 3 };
/** The rate limiter's clock stands still unless a test moves it: no refill happens behind a test's back. */
const clock = manualMonotonicClock();

/** Embed page loads per 5 minutes per client address: the least AWS WAF allows, small enough to reach. */
const EMBED_PAGE_LIMIT = 10;

const runtime = useTestRuntime({
  apiKeyLimits: LIMITS,
  rateLimitClock: clock,
  embedPageRateLimit: EMBED_PAGE_LIMIT,
});

/** A cheap authenticated request: a session that does not exist, answered 404 by the function. */
const lookup = (apiKey: string) => apiCall(runtime, apiKey, 'GET', `/api/embed/sessions/${randomUUID()}`);

/** The RateLimit-* headers of a response, as numbers (NaN when absent). */
const limitsOf = (result: CallResult) => ({
  limit: Number(result.headers.get('ratelimit-limit') ?? Number.NaN),
  remaining: Number(result.headers.get('ratelimit-remaining') ?? Number.NaN),
  reset: Number(result.headers.get('ratelimit-reset') ?? Number.NaN),
});

/** Runs the admin CLI against this runtime (in this process: test/integration/admin-cli.test.ts runs it as one). */
async function admin(...args: string[]): Promise<Record<string, unknown>> {
  const out: string[] = [];
  const code = await main(
    args,
    { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint },
    {
      out: (text) => out.push(text),
      err: () => undefined,
    },
  );
  expect(code).toBe(0);
  return JSON.parse(out.join('')) as Record<string, unknown>;
}

describe('per-key rate limits on the local runtime', () => {
  it('reads its default limit from API_KEY_RATE_LIMIT and API_KEY_BURST_LIMIT', () => {
    expect(runtime.apiKeyLimits).toEqual(LIMITS);
  });

  it('answers 429 Too Many Requests with Retry-After once a key has spent its burst', async () => {
    const { apiKey } = await keyOwner(runtime, 'rl-burst');
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await lookup(apiKey));
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404]);
    expect(answers.map((a) => limitsOf(a).remaining)).toEqual([2, 1, 0]);

    const refused = await lookup(apiKey);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: 'Too Many Requests',
      message: 'Too many requests; slow down and retry',
    });
    expect(refused.headers.get('content-type')).toBe('application/json');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(limitsOf(refused)).toEqual({ limit: 3, remaining: 0, reset: 3 });
  });

  it('puts RateLimit headers on every answer to an authenticated route: success and the function’s errors', async () => {
    const { apiKey } = await keyOwner(runtime, 'rl-headers');
    const created = await apiCall(runtime, apiKey, 'POST', '/api/embed/sessions', {
      boardId: runtime.demo?.publicBoardId,
      userId: 'rl-user',
      email: 'rl@example.com',
    });
    expect(created.status).toBe(201);
    expect(limitsOf(created)).toEqual({ limit: 3, remaining: 2, reset: 1 });
    const invalid = await apiCall(runtime, apiKey, 'POST', '/api/embed/sessions', { boardId: 'b' });
    expect(invalid.status).toBe(400);
    expect(limitsOf(invalid)).toEqual({ limit: 3, remaining: 1, reset: 2 });
    const missing = await lookup(apiKey);
    expect(missing.status).toBe(404);
    expect(limitsOf(missing)).toEqual({ limit: 3, remaining: 0, reset: 3 });
    for (const answer of [created, invalid, missing]) expect(answer.headers.get('retry-after')).toBeNull();
  });

  it('gives every key its own bucket: another owner’s key, and another key of the same owner, stay full', async () => {
    const first = await keyOwner(runtime, 'rl-owner-a');
    const otherOwner = await keyOwner(runtime, 'rl-owner-b');
    const sameOwner = await keyOwner(runtime, 'rl-owner-a');
    for (let i = 0; i < 3; i++) await lookup(first.apiKey);
    expect((await lookup(first.apiKey)).status).toBe(429);

    for (const { apiKey } of [otherOwner, sameOwner]) {
      const answer = await lookup(apiKey);
      expect(answer.status).toBe(404);
      expect(limitsOf(answer).remaining).toBe(2);
    }
  });

  it('refills a key’s bucket at its rate', async () => {
    const { apiKey } = await keyOwner(runtime, 'rl-refill');
    for (let i = 0; i < 3; i++) await lookup(apiKey);
    expect((await lookup(apiKey)).status).toBe(429);
    clock.advance(1000);
    const refilled = await lookup(apiKey);
    expect(refilled.status).toBe(404);
    expect(limitsOf(refilled)).toEqual({ limit: 3, remaining: 0, reset: 3 });
    expect((await lookup(apiKey)).status).toBe(429);
    clock.advance(3000);
    expect(limitsOf(await lookup(apiKey)).remaining).toBe(2);
  });

  it('applies a key’s own limit set with the admin CLI at once, and the default again once it is cleared', async () => {
    const { apiKey, keyId } = await keyOwner(runtime, 'rl-override');
    for (let i = 0; i < 3; i++) await lookup(apiKey);
    expect((await lookup(apiKey)).status).toBe(429);

    const set = await admin('set-rate-limit', '--key-id', keyId, '--rate', '2', '--burst', '6');
    expect(set).toMatchObject({ keyId, limits: { rate: 2, burst: 6 } });
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await lookup(apiKey)).status);
    expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 429]);

    const listed = await admin('list-api-keys', '--user', 'rl-override');
    expect(listed.apiKeys).toEqual([expect.objectContaining({ keyId, limits: { rate: 2, burst: 6 } })]);

    expect(await admin('clear-rate-limit', '--key-id', keyId)).toMatchObject({ keyId, limits: null });
    expect(limitsOf(await lookup(apiKey))).toEqual({ limit: 3, remaining: 2, reset: 1 });
  });

  it('sends no RateLimit headers where no key is involved: open routes and refused keys', async () => {
    for (const answer of [
      await call(runtime, '/health'),
      await call(runtime, '/embed?token=x'),
      await lookup(`esk_${'A'.repeat(43)}`),
    ]) {
      expect(answer.headers.get('ratelimit-limit')).toBeNull();
      expect(answer.headers.get('ratelimit-remaining')).toBeNull();
    }
  });
});

describe('the embed page limited per client address on the local runtime', () => {
  it('answers 429 with Retry-After once one address loaded it EMBED_PAGE_RATE_LIMIT times in 5 minutes, before any lookup', async () => {
    // A malformed token is refused without a lookup: the cheapest load, and still counted. Other tests of
    // this file may have loaded the page already, so the limit comes within EMBED_PAGE_LIMIT + 1 loads.
    const statuses: number[] = [];
    for (let i = 0; i <= EMBED_PAGE_LIMIT; i++)
      statuses.push((await call(runtime, '/embed?token=nope')).status);
    const firstRefusal = statuses.indexOf(429);
    expect(firstRefusal).toBeGreaterThanOrEqual(0);
    expect(statuses.slice(0, firstRefusal).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(firstRefusal).every((status) => status === 429)).toBe(true);
    const refused = await call(runtime, '/embed?token=nope');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.text).toContain('Too many requests');
    // The scripts and the API are not counted.
    expect((await call(runtime, '/embed.js')).status).toBe(200);
  });
});
