import type { Context } from 'aws-lambda';
import { runWithDeadline } from '#lib/platform/deadline';

/**
 * How long one invocation may spend on DynamoDB. A hanging DynamoDB fails one call after its 3 attempts of
 * 1 s (lib/platform/aws-clients.ts); this caps the sum of several calls, so that the authorizer (one call) and a
 * function (up to 3) together answer within 10 s, far inside the 20 s function timeout and API Gateway's 29 s.
 */
export const REQUEST_BUDGET_MS = 5_000;

/** Time kept back from Lambda's own remaining time, to render the 503 before Lambda would time out. */
export const LAMBDA_RESERVE_MS = 1_000;

// A registered symbol: the mark (the budget) survives a second copy of this module (tests reload modules).
const BUDGETED = Symbol.for('embed-session-service.request-budget');

/** What a handler chain looks like to the wrapper: callable, with middy's chaining methods. */
type Handler = ((event: never, context: Context, ...rest: never[]) => unknown) & Record<string, unknown>;

/**
 * Gives every invocation of a handler one deadline for all its DynamoDB calls: the request budget, or
 * Lambda's remaining time less a reserve when that is shorter. Every function that uses DynamoDB starts
 * with `withRequestBudget(middy<Event, Result>())`; the middy methods (`use`, `before`, `handler`…) keep
 * chaining on the result. The deadline lives in AsyncLocalStorage, so concurrent requests never share one.
 */
export function withRequestBudget<H>(handler: H, options: { budgetMs?: number; reserveMs?: number } = {}): H {
  const inner = handler as unknown as Handler;
  const budgetMs = options.budgetMs ?? REQUEST_BUDGET_MS;
  const reserveMs = options.reserveMs ?? LAMBDA_RESERVE_MS;
  const budgeted = ((event: never, context: Context, ...rest: never[]) => {
    const lambdaLeft =
      typeof context?.getRemainingTimeInMillis === 'function'
        ? context.getRemainingTimeInMillis() - reserveMs
        : Number.POSITIVE_INFINITY;
    const deadline = Date.now() + Math.max(0, Math.min(budgetMs, lambdaLeft));
    return runWithDeadline(deadline, () => inner(event, context, ...rest));
  }) as Handler;
  // middy's chaining methods configure the wrapped handler and return the budgeted one.
  for (const [name, method] of Object.entries(inner)) {
    if (typeof method !== 'function') continue;
    budgeted[name] = (...args: unknown[]) => {
      const result = (method as (...a: unknown[]) => unknown).apply(inner, args);
      return result === inner ? budgeted : result;
    };
  }
  Object.defineProperty(budgeted, BUDGETED, { value: budgetMs });
  return budgeted as unknown as H;
}

/** The request budget of a handler made by `withRequestBudget` (infinite: Lambda's time alone), else undefined. */
export function requestBudgetOf(handler: unknown): number | undefined {
  if (typeof handler !== 'function') return undefined;
  const budget = (handler as unknown as Record<symbol, unknown>)[BUDGETED];
  return typeof budget === 'number' ? budget : undefined;
}
