import type { APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { httpErrors, statusOf } from '#lib/adapters/http/middlewares/http-errors';
import {
  BoardAccessDeniedError,
  BoardNotFoundError,
  DomainError,
  InvalidApiKeyError,
  PayloadTooLargeError,
  StorageUnavailableError,
  UnsupportedMediaTypeError,
  ValidationError,
  WebhookLimitReachedError,
} from '#lib/domain/errors';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '#lib/domain/retry-after';
import { lambdaContext, proxyEvent } from '#test/support/events';
import { failingHandler } from '#test/support/failing-handler';

/** A handler that throws `error`, wrapped in the error middleware with an in-memory logger. */
const failing = (error: unknown) =>
  failingHandler(
    httpErrors,
    error,
    proxyEvent({ requestId: 'req-123' }),
    lambdaContext('lambda-invocation-id'),
  );

const body = (result: APIGatewayProxyResult) => JSON.parse(result.body) as Record<string, unknown>;

describe('httpErrors: status mapping', () => {
  it.each([
    ['ValidationError', 400, 'Bad Request', new ValidationError('email must be a valid e-mail address')],
    ['InvalidApiKeyError', 401, 'Unauthorized', new InvalidApiKeyError('API key is not known')],
    ['BoardAccessDeniedError', 403, 'Forbidden', new BoardAccessDeniedError()],
    ['BoardNotFoundError', 404, 'Not Found', new BoardNotFoundError('b-1')],
    [
      'PayloadTooLargeError',
      413,
      'Payload Too Large',
      new PayloadTooLargeError('Request body must be at most 10 bytes'),
    ],
    [
      'UnsupportedMediaTypeError',
      415,
      'Unsupported Media Type',
      new UnsupportedMediaTypeError('Content-Type must be application/json'),
    ],
    ['WebhookLimitReachedError', 422, 'Unprocessable Content', new WebhookLimitReachedError(16)],
    ['StorageUnavailableError', 503, 'Service Unavailable', new StorageUnavailableError()],
  ])('answers %s with %i {error: %j, message}', async (_class, status, name, error) => {
    const result = await failing(error).invoke();
    expect(result.statusCode).toBe(status);
    expect(body(result)).toEqual({ error: name, message: (error as Error).message });
    expect(statusOf(error)).toBe(status);
  });

  it('sends the JSON and no-store headers on every error', async () => {
    for (const error of [new ValidationError('x'), new StorageUnavailableError(), new Error('boom')]) {
      const { headers } = await failing(error).invoke();
      expect(headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    }
  });

  it('adds Retry-After to a 503 and to nothing else', async () => {
    const unavailable = await failing(new StorageUnavailableError()).invoke();
    expect(unavailable.headers?.['Retry-After']).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    const notFound = await failing(new BoardNotFoundError('b')).invoke();
    expect(notFound.headers).not.toHaveProperty('Retry-After');
  });
});

describe('httpErrors: unexpected errors', () => {
  it('answers 500 with a generic message that shows no internals', async () => {
    const error = new TypeError(
      "Cannot read properties of undefined (reading 'orgId') at /var/task/index.mjs",
    );
    const result = await failing(error).invoke();
    expect(result.statusCode).toBe(500);
    expect(body(result)).toEqual({ error: 'Internal Server Error', message: 'An unexpected error occurred' });
    expect(result.body).not.toContain('orgId');
    expect(result.body).not.toContain('TypeError');
    expect(result.body).not.toContain('/var/task');
  });

  it('treats an unmapped DomainError subclass and a thrown non-error as 500', async () => {
    class SomethingNew extends DomainError {}
    expect((await failing(new SomethingNew('internal detail')).invoke()).statusCode).toBe(500);
    const result = await failing('a thrown string').invoke();
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('a thrown string');
  });

  const cause = Object.assign(new Error('Throughput exceeds the current capacity'), {
    name: 'ProvisionedThroughputExceededException',
  });
  it.each([
    [
      'the unexpected error at error level',
      new Error('db exploded'),
      { level: 'error', message: 'unexpected error', errorName: 'Error', errorMessage: 'db exploded' },
    ],
    [
      'a storage outage as a warning with the underlying cause',
      new StorageUnavailableError({ cause }),
      { level: 'warn', errorName: 'ProvisionedThroughputExceededException' },
    ],
    [
      'an expected rejection with its status and error name, not its message',
      new BoardNotFoundError('secret-board'),
      { level: 'info', status: 404, reason: 'BoardNotFoundError' },
    ],
  ])('logs %s, with the request id', async (_case, error, line) => {
    const { invoke, lines } = failing(error);
    await invoke();
    expect(lines()).toEqual([expect.objectContaining({ requestId: 'req-123', ...line })]);
    expect(JSON.stringify(lines())).not.toContain('secret-board');
  });
});
