import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import {
  LAMBDA_RESERVE_MS,
  REQUEST_BUDGET_MS,
  requestBudgetOf,
  withRequestBudget,
} from '#lib/adapters/http/middlewares/request-budget';
import { AWS_CALL_LIMITS } from '#lib/platform/aws-clients';
import { remainingMs } from '#lib/platform/deadline';
import { lambdaContext } from '#test/support/events';

/**
 * A budgeted middy handler that reports, after an await, the deadline it runs under (epoch ms; the time
 * left is 0 once it has passed).
 */
function probe(options: { budgetMs?: number; reserveMs?: number } = {}) {
  return withRequestBudget(middy<{ wait: number }, { deadline: number; left: number }>(), options).handler(
    async (event) => {
      await new Promise((resolve) => setTimeout(resolve, event.wait));
      const left = remainingMs() ?? Number.NaN;
      return { deadline: Date.now() + left, left };
    },
  );
}

/** Invokes `handler` and gives the deadline it saw less `offsetMs`, with the clock just before and after. */
async function deadlineOf(run: () => Promise<{ deadline: number }>, offsetMs: number) {
  const before = Date.now();
  const { deadline } = await run();
  return { start: deadline - offsetMs, before, after: Date.now() };
}

describe('withRequestBudget', () => {
  it('gives each invocation the budget as its deadline', async () => {
    const { start, before, after } = await deadlineOf(
      () => probe({ budgetMs: 2_000 })({ wait: 10 }, lambdaContext('r', 60_000)),
      2_000,
    );
    expect(start).toBeGreaterThanOrEqual(before);
    expect(start).toBeLessThanOrEqual(after);
  });

  it("takes Lambda's remaining time into account, less a reserve to answer before Lambda times out", async () => {
    // 2.5 s left and a 1 s reserve: a deadline 1.5 s after the start, not the 5 s budget.
    const { start, before, after } = await deadlineOf(
      () => probe({ budgetMs: 5_000, reserveMs: 1_000 })({ wait: 10 }, lambdaContext('r', 2_500)),
      1_500,
    );
    expect(start).toBeGreaterThanOrEqual(before - 1);
    expect(start).toBeLessThanOrEqual(after);
    // Less time left than the reserve: the deadline has passed from the start.
    const none = await probe({ budgetMs: 5_000, reserveMs: 1_000 })({ wait: 0 }, lambdaContext('r', 500));
    expect(none.left).toBe(0);
  });

  it("with an infinite budget, gives Lambda's remaining time less the reserve: a route whose work grows", async () => {
    const { start, before, after } = await deadlineOf(
      () =>
        probe({ budgetMs: Number.POSITIVE_INFINITY, reserveMs: 1_000 })(
          { wait: 10 },
          lambdaContext('r', 21_000),
        ),
      20_000,
    );
    expect(start).toBeGreaterThanOrEqual(before - 1);
    expect(start).toBeLessThanOrEqual(after);
  });

  it('keeps the deadlines of concurrent invocations apart', async () => {
    const handler = probe();
    const [long, short] = await Promise.all([
      handler({ wait: 50 }, lambdaContext('a', 60_000)),
      handler({ wait: 50 }, lambdaContext('b', LAMBDA_RESERVE_MS + 1_000)),
    ]);
    // Started together: one has the 5 s budget, the other Lambda's 2 s less the 1 s reserve.
    expect(long.deadline - short.deadline).toBeGreaterThan(REQUEST_BUDGET_MS - 1_000 - 100);
    expect(long.deadline - short.deadline).toBeLessThan(REQUEST_BUDGET_MS - 1_000 + 100);
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
    expect(requestBudgetOf(handler)).toBe(REQUEST_BUDGET_MS);
    await expect(handler({}, {} as Context)).resolves.toBe('ok');
    expect(order).toEqual(['before', 'handler with a deadline', 'after']);
  });

  it('has a budget that, with one authorizer call that hangs, answers within 10 s', () => {
    // Worst case of one hanging call: 3 attempts of the request timeout, plus the SDK's backoff (< 1 s).
    const hangingCallMs = AWS_CALL_LIMITS.maxAttempts * AWS_CALL_LIMITS.requestTimeoutMs + 1_000;
    expect(REQUEST_BUDGET_MS).toBe(5_000);
    expect(hangingCallMs + REQUEST_BUDGET_MS).toBeLessThan(10_000);
  });
});
