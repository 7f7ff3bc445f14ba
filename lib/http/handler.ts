import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createLogger } from '#lib/platform/logger';
import { httpErrors } from './middlewares/http-errors';

type ProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * A JSON API route's Lambda handler with the house middlewares, wired the same way for every route:
 * any error becomes the `{error, message}` response of its domain error (or a logged 500), then `use`
 * (such as the JSON body parser) runs before `handle`.
 */
export function jsonApiHandler(
  functionName: string,
  use: readonly middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>[],
  handle: ProxyHandler,
) {
  const logger = createLogger({ function: functionName });
  let chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult>().use(httpErrors({ logger }));
  for (const middleware of use) chain = chain.use(middleware);
  return chain.handler(handle);
}
