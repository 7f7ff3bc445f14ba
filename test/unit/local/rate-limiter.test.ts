import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_API_KEY_LIMITS } from '#lib/definitions/rate-limits';
import { KeyRateLimiter, readApiKeyLimits } from '#local/rate-limiter';
import { manualMonotonicClock } from '#test/support/fakes';

const DEFAULTS = { rate: 2, burst: 3 };

function setup(defaults = DEFAULTS) {
  const clock = manualMonotonicClock();
  return { clock, limiter: new KeyRateLimiter(defaults, clock) };
}

/** The RateLimit-* headers of a decision as numbers. */
function numbers(headers: Record<string, string>) {
  return {
    limit: Number(headers['RateLimit-Limit']),
    remaining: Number(headers['RateLimit-Remaining']),
    reset: Number(headers['RateLimit-Reset']),
  };
}

describe('KeyRateLimiter: a token bucket per usage identifier', () => {
  it('allows a full burst at once, then refuses', () => {
    const { limiter } = setup();
    const outcomes = Array.from({ length: 4 }, () => limiter.take('usage_a', null).allowed);
    expect(outcomes).toEqual([true, true, true, false]);
  });

  it('reports the burst as the limit, what is left after each request, and when the bucket is full again', () => {
    const { limiter } = setup();
    expect(numbers(limiter.take('usage_a', null).headers)).toEqual({ limit: 3, remaining: 2, reset: 1 });
    expect(numbers(limiter.take('usage_a', null).headers)).toEqual({ limit: 3, remaining: 1, reset: 1 });
    // Three tokens missing at two per second: full again in 1.5 s, rounded up.
    expect(numbers(limiter.take('usage_a', null).headers)).toEqual({ limit: 3, remaining: 0, reset: 2 });
  });

  it('sends Retry-After only on a refusal: the seconds until the next token, rounded up', () => {
    const { limiter } = setup();
    for (let i = 0; i < 3; i++)
      expect(limiter.take('usage_a', null).headers).not.toHaveProperty('Retry-After');
    const refused = limiter.take('usage_a', null);
    expect(refused.allowed).toBe(false);
    expect(refused.headers['Retry-After']).toBe('1');
    expect(numbers(refused.headers)).toEqual({ limit: 3, remaining: 0, reset: 2 });
  });

  it('asks for at least one second even when the next token is a fraction of a millisecond away', () => {
    const { clock, limiter } = setup({ rate: 10_000, burst: 1 });
    limiter.take('usage_a', null);
    clock.advance(0.0999);
    const refused = limiter.take('usage_a', null);
    expect(refused.allowed).toBe(false);
    expect(refused.headers['Retry-After']).toBe('1');
  });

  it('refills at the rate per second, never beyond the burst', () => {
    const { clock, limiter } = setup();
    for (let i = 0; i < 3; i++) limiter.take('usage_a', null);
    clock.advance(499);
    expect(limiter.take('usage_a', null).allowed).toBe(false);
    clock.advance(1);
    expect(limiter.take('usage_a', null).allowed).toBe(true);
    clock.advance(60_000);
    expect(numbers(limiter.take('usage_a', null).headers)).toMatchObject({ remaining: 2 });
  });

  it('does not charge a refused request: waiting one token’s time always lets the next one through', () => {
    const { clock, limiter } = setup({ rate: 1, burst: 1 });
    limiter.take('usage_a', null);
    for (let i = 0; i < 5; i++) expect(limiter.take('usage_a', null).allowed).toBe(false);
    clock.advance(1000);
    expect(limiter.take('usage_a', null).allowed).toBe(true);
  });

  it('keeps one bucket per usage identifier: one key’s burst never spends another’s', () => {
    const { limiter } = setup();
    for (let i = 0; i < 3; i++) limiter.take('usage_a', null);
    expect(limiter.take('usage_a', null).allowed).toBe(false);
    expect(numbers(limiter.take('usage_b', null).headers)).toEqual({ limit: 3, remaining: 2, reset: 1 });
  });

  it('applies a key’s own limits instead of the defaults', () => {
    const { limiter } = setup();
    const own = { rate: 1, burst: 5 };
    const outcomes = Array.from({ length: 6 }, () => limiter.take('usage_a', own).allowed);
    expect(outcomes).toEqual([true, true, true, true, true, false]);
    expect(numbers(limiter.take('usage_a', own).headers)).toEqual({ limit: 5, remaining: 0, reset: 5 });
  });

  it('starts a full bucket when a key’s limits change, as a key moved to another usage plan does', () => {
    const { limiter } = setup();
    for (let i = 0; i < 3; i++) limiter.take('usage_a', null);
    expect(limiter.take('usage_a', null).allowed).toBe(false);
    expect(numbers(limiter.take('usage_a', { rate: 1, burst: 10 }).headers)).toMatchObject({ remaining: 9 });
    // And back to the defaults: full again.
    expect(numbers(limiter.take('usage_a', null).headers)).toMatchObject({ limit: 3, remaining: 2 });
  });

  it('counts whole tokens despite float arithmetic on odd rates and intervals', () => {
    const { clock, limiter } = setup({ rate: 3, burst: 1 });
    limiter.take('usage_a', null);
    for (let i = 0; i < 300; i++) {
      clock.advance(1000 / 3);
      expect(limiter.take('usage_a', null).allowed).toBe(true);
    }
  });

  it('ignores a clock that runs backwards rather than draining the bucket', () => {
    const { clock, limiter } = setup();
    limiter.take('usage_a', null);
    clock.advance(-10_000);
    expect(numbers(limiter.take('usage_a', null).headers)).toMatchObject({ remaining: 1 });
  });
});

describe('KeyRateLimiter: the default clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refills with real (monotonic) time', () => {
    vi.useFakeTimers();
    const limiter = new KeyRateLimiter({ rate: 1, burst: 1 });
    expect(limiter.take('usage_a', null).allowed).toBe(true);
    expect(limiter.take('usage_a', null).allowed).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(limiter.take('usage_a', null).allowed).toBe(true);
  });
});

describe('readApiKeyLimits (the local gateway)', () => {
  const read = (env: Record<string, string>) => {
    const problems: string[] = [];
    return { limits: readApiKeyLimits(env, problems), problems };
  };

  it('defaults to the stack’s default usage plan: 50 requests per second, bursts of 100', () => {
    expect(read({})).toEqual({ limits: { rate: 50, burst: 100 }, problems: [] });
    expect(DEFAULT_API_KEY_LIMITS).toEqual({ rate: 50, burst: 100 });
  });

  it('reads API_KEY_RATE_LIMIT and API_KEY_BURST_LIMIT, per second', () => {
    expect(read({ API_KEY_RATE_LIMIT: '2', API_KEY_BURST_LIMIT: ' 7 ' })).toEqual({
      limits: { rate: 2, burst: 7 },
      problems: [],
    });
    expect(read({ API_KEY_RATE_LIMIT: '10000', API_KEY_BURST_LIMIT: '5000' }).limits).toEqual({
      rate: 10_000,
      burst: 5_000,
    });
  });

  it.each([
    ['API_KEY_RATE_LIMIT', '0', 'API_KEY_RATE_LIMIT must be an integer from 1 to 10000, got "0"'],
    ['API_KEY_RATE_LIMIT', '0.5', 'API_KEY_RATE_LIMIT must be an integer from 1 to 10000, got "0.5"'],
    ['API_KEY_RATE_LIMIT', '10001', 'API_KEY_RATE_LIMIT must be an integer from 1 to 10000, got "10001"'],
    ['API_KEY_BURST_LIMIT', '-1', 'API_KEY_BURST_LIMIT must be an integer from 1 to 5000, got "-1"'],
    ['API_KEY_BURST_LIMIT', 'lots', 'API_KEY_BURST_LIMIT must be an integer from 1 to 5000, got "lots"'],
    ['API_KEY_BURST_LIMIT', '5001', 'API_KEY_BURST_LIMIT must be an integer from 1 to 5000, got "5001"'],
  ])('refuses %s=%j, naming it', (name, value, message) => {
    expect(read({ [name]: value }).problems).toEqual([message]);
  });
});
