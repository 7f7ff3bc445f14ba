import type * as Lambda from 'aws-lambda';
import { lambdaContext } from './events';
import type { ProxyHandler } from './harness';

/**
 * Invokes a proxy handler with `requestId` as API Gateway's request id (the one logs and X-Request-Id
 * carry), under a fixed Lambda invocation id.
 */
export function invokeWithRequestId(
  handler: ProxyHandler,
  event: Lambda.APIGatewayProxyEvent,
  requestId: string,
): Promise<Lambda.APIGatewayProxyResult> {
  return handler(
    { ...event, requestContext: { ...event.requestContext, requestId } },
    lambdaContext('lambda-invocation-id'),
  );
}
