import type { APIGatewayProxyResult, Context } from 'aws-lambda';

/** The response header naming the request, for a caller to quote and an operator to find in the logs. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * The id of the request: API Gateway's own (`requestContext.requestId`, the id of its access log and of
 * `$context.requestId` in the gateway responses), else Lambda's invocation id. Every log line of a
 * request and its `X-Request-Id` header carry this one value.
 */
export function requestIdOf(event: unknown, context?: Pick<Context, 'awsRequestId'>): string | undefined {
  const fromGateway = (event as { requestContext?: { requestId?: unknown } } | undefined)?.requestContext
    ?.requestId;
  if (typeof fromGateway === 'string' && fromGateway !== '') return fromGateway;
  return context?.awsRequestId || undefined;
}

type Handler = ((event: never, context: Context, ...rest: never[]) => unknown) & Record<string, unknown>;

/**
 * Adds `X-Request-Id` to every answer of a proxy handler, errors and replays included (it wraps the
 * handler, so no middleware can answer past it). Chaining methods (middy's `use`, `handler`…) and marks
 * (the request budget) of the wrapped handler carry over, as `withRequestBudget` does.
 */
export function withRequestId<H>(handler: H): H {
  const inner = handler as unknown as Handler;
  const wrapped = (async (event: never, context: Context, ...rest: never[]) => {
    const result = (await inner(event, context, ...rest)) as APIGatewayProxyResult | undefined;
    const requestId = requestIdOf(event, context);
    if (!result || typeof result !== 'object' || !requestId) return result;
    return { ...result, headers: { ...result.headers, [REQUEST_ID_HEADER]: requestId } };
  }) as unknown as Handler;
  for (const [name, method] of Object.entries(inner)) {
    if (typeof method !== 'function') continue;
    wrapped[name] = (...args: unknown[]) => {
      const result = (method as (...a: unknown[]) => unknown).apply(inner, args);
      return result === inner ? wrapped : result;
    };
  }
  for (const symbol of Object.getOwnPropertySymbols(inner)) {
    Object.defineProperty(
      wrapped,
      symbol,
      Object.getOwnPropertyDescriptor(inner, symbol) as PropertyDescriptor,
    );
  }
  return wrapped as unknown as H;
}
