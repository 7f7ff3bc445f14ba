import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { httpErrors } from '#lib/adapters/http/middlewares/http-errors';
import { requestBudgetOf, withRequestBudget } from '#lib/adapters/http/middlewares/request-budget';
import { REQUEST_ID_HEADER, requestIdOf, withRequestId } from '#lib/adapters/http/request-id';
import { jsonResponse } from '#lib/adapters/http/response';
import { ValidationError } from '#lib/domain/errors';
import { lambdaContext, proxyEvent } from '#test/support/events';
import { memoryLogger } from '#test/support/logs';

const event = () => proxyEvent({ requestId: 'apigw-request-1' });
const context = () => lambdaContext('lambda-invocation-1');

describe('requestIdOf', () => {
  it('prefers API Gateway’s request id over Lambda’s invocation id', () => {
    expect(requestIdOf(event(), context())).toBe('apigw-request-1');
  });

  it('falls back to Lambda’s invocation id when the event has none', () => {
    expect(requestIdOf({}, context())).toBe('lambda-invocation-1');
  });
});

describe('withRequestId', () => {
  it('adds X-Request-Id (API Gateway’s id) to a successful answer, keeping its headers', async () => {
    const handler = withRequestId(async (_event: APIGatewayProxyEvent, _context: unknown) =>
      jsonResponse(200, { ok: true }, { ETag: '"1"' }),
    );
    const result = (await handler(event(), context())) as APIGatewayProxyResult;
    expect(result.headers).toMatchObject({ [REQUEST_ID_HEADER]: 'apigw-request-1', ETag: '"1"' });
  });

  it('adds it to an error a middleware rendered, and logs that error with the same id', async () => {
    const { logger, lines } = memoryLogger();
    const handler = withRequestId(withRequestBudget(middy<APIGatewayProxyEvent, APIGatewayProxyResult>()))
      .use(httpErrors({ logger }))
      .handler(async () => {
        throw new ValidationError('bad');
      });
    const result = await handler(event(), context());
    expect(result.statusCode).toBe(400);
    expect(result.headers?.[REQUEST_ID_HEADER]).toBe('apigw-request-1');
    expect(lines()).toEqual([expect.objectContaining({ requestId: 'apigw-request-1' })]);
  });

  it('keeps the request budget mark and middy’s chaining of the handler it wraps', () => {
    const handler = withRequestId(withRequestBudget(middy(), { budgetMs: 1234 }));
    expect(requestBudgetOf(handler)).toBe(1234);
    expect(handler.use(httpErrors({ logger: memoryLogger().logger }))).toBe(handler);
  });
});
