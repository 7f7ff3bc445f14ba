import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { DYNAMODB_LIMITS } from '#lib/dynamodb/client';
import {
  hasRequestBudget,
  LAMBDA_RESERVE_MS,
  REQUEST_BUDGET_MS,
  withRequestBudget,
} from '#lib/http/middlewares/request-budget';
import { remainingMs } from '#lib/platform/deadline';
import { lambdaContext } from '#test/support/events';

/** A budgeted middy handler that reports the deadline it sees after an await. */
function probe(options: { budgetMs?: number; reserveMs?: number } = {}) {
  return withRequestBudget(middy<{ wait: number }, number | undefined>(), options).handler(async (event) => {
    await new Promise((resolve) => setTimeout(resolve, event.wait));
    return remainingMs();
  });
}

describe('withRequestBudget', () => {
  it('gives each invocation the budget as its deadline', async () => {
    const left = await probe({ budgetMs: 2_000 })({ wait: 10 }, lambdaContext('r', 60_000));
    expect(left).toBeGreaterThan(1_800);
    expect(left).toBeLessThanOrEqual(2_000);
  });

  it("takes Lambda's remaining time into account, less a reserve to answer before Lambda times out", async () => {
    const left = await probe({ budgetMs: 5_000, reserveMs: 1_000 })({ wait: 10 }, lambdaContext('r', 2_500));
    expect(left).toBeGreaterThan(1_300);
    expect(left).toBeLessThanOrEqual(1_500);
    const none = await probe({ budgetMs: 5_000, reserveMs: 1_000 })({ wait: 0 }, lambdaContext('r', 500));
    expect(none).toBe(0);
  });

  it('keeps the deadlines of concurrent invocations apart', async () => {
    const handler = probe();
    const [long, short] = await Promise.all([
      handler({ wait: 50 }, lambdaContext('a', 60_000)),
      handler({ wait: 50 }, lambdaContext('b', LAMBDA_RESERVE_MS + 1_000)),
    ]);
    expect(long).toBeGreaterThan(REQUEST_BUDGET_MS - 500);
    expect(short).toBeLessThanOrEqual(1_000);
  });

  it('leaves no deadline behind outside an invocation', async () => {
    await probe()({ wait: 0 }, lambdaContext());
    expect(remainingMs()).toBeUndefined();
  });

  it('keeps middy chaining: middlewares added after wrapping run, and the result is still budgeted', async () => {
    const order: string[] = [];
    const handler = withRequestBudget(middy<unknown, string>())
      .use({ before: () => void order.push('before') })
      .use({ after: () => void order.push('after') })
      .handler(async () => {
        order.push(`handler with ${remainingMs() === undefined ? 'no' : 'a'} deadline`);
        return 'ok';
      });
    expect(hasRequestBudget(handler)).toBe(true);
    await expect(handler({}, {} as Context)).resolves.toBe('ok');
    expect(order).toEqual(['before', 'handler with a deadline', 'after']);
  });

  it('has a budget that, with one authorizer call that hangs, answers within 10 s', () => {
    // Worst case of one hanging call: 3 attempts of the request timeout, plus the SDK's backoff (< 1 s).
    const hangingCallMs = DYNAMODB_LIMITS.maxAttempts * DYNAMODB_LIMITS.requestTimeoutMs + 1_000;
    expect(REQUEST_BUDGET_MS).toBe(5_000);
    expect(hangingCallMs + REQUEST_BUDGET_MS).toBeLessThan(10_000);
  });
});
