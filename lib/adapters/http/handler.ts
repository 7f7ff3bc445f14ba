import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { httpErrors } from '#lib/adapters/http/middlewares/http-errors';
import { withRequestBudget } from '#lib/adapters/http/middlewares/request-budget';
import { createLogger } from '#lib/platform/logger';
import { withRequestId } from './request-id';

type ProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;

/**
 * A JSON API route's Lambda handler with the house middlewares, wired the same way for every route.
 * `outer` middlewares wrap the error mapper, so they see the final answer even of a failed request (the
 * Idempotency-Key store); then any error becomes the `{error, message}` response of its domain error (or
 * a logged 500); `inner` middlewares (such as the JSON body parser) run just before `handle`.
 * `budgetMs` replaces the default request budget, for a route whose work grows with the data.
 */
export function jsonApiHandler(
  functionName: string,
  middlewares: { outer?: readonly Middleware[]; inner?: readonly Middleware[]; budgetMs?: number },
  handle: ProxyHandler,
) {
  const logger = createLogger({ function: functionName });
  // Every route's DynamoDB calls share one deadline per request (lib/adapters/http/middlewares/request-budget.ts).
  // Every answer names its request (X-Request-Id), whatever middleware made it.
  let chain = withRequestId(
    withRequestBudget(middy<APIGatewayProxyEvent, APIGatewayProxyResult>(), {
      budgetMs: middlewares.budgetMs,
    }),
  );
  for (const middleware of middlewares.outer ?? []) chain = chain.use(middleware);
  chain = chain.use(httpErrors({ logger }));
  for (const middleware of middlewares.inner ?? []) chain = chain.use(middleware);
  return chain.handler(handle);
}
