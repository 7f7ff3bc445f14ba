import middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { optionalJsonBody } from '#lib/adapters/http/middlewares/optional-json-body';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '#lib/domain/errors';
import { lambdaContext, proxyEvent } from '#test/support/events';

/** A handler that returns what the middleware left in `event.body`. */
const handler = middy<APIGatewayProxyEvent, unknown>()
  .use(optionalJsonBody({ maxBytes: 64 }))
  .handler(async (event) => event.body);

const invoke = (body: string | null, headers: Record<string, string> = {}, isBase64Encoded = false) =>
  handler({ ...proxyEvent({ body, headers }), isBase64Encoded }, lambdaContext());

describe('optionalJsonBody', () => {
  it.each([
    ['no body', null],
    ['an empty body', ''],
    ['a space', ' '],
    ['only whitespace', ' \n\t\r '],
  ])('takes %s as absent (null), whatever the Content-Type', async (_name, body) => {
    await expect(invoke(body)).resolves.toBeNull();
    await expect(invoke(body, { 'Content-Type': 'application/json' })).resolves.toBeNull();
  });

  it('takes a base64-encoded body of whitespace as absent too', async () => {
    await expect(invoke(Buffer.from('  ').toString('base64'), {}, true)).resolves.toBeNull();
  });

  it('parses a body with content as the JSON object it must be', async () => {
    await expect(invoke(' {"a":1} ', { 'Content-Type': 'application/json' })).resolves.toEqual({ a: 1 });
  });

  it('refuses a body with content as jsonBody does: media type, syntax, object, size', async () => {
    await expect(invoke('{"a":1}')).rejects.toBeInstanceOf(UnsupportedMediaTypeError);
    const json = { 'Content-Type': 'application/json' };
    await expect(invoke('{"a":', json)).rejects.toBeInstanceOf(ValidationError);
    await expect(invoke('"text"', json)).rejects.toThrow('Request body must be a JSON object');
    await expect(invoke(`{"a":"${'x'.repeat(64)}"}`, json)).rejects.toBeInstanceOf(PayloadTooLargeError);
  });

  it('refuses whitespace beyond the size limit rather than reading it all as absent', async () => {
    await expect(invoke(' '.repeat(65))).rejects.toBeInstanceOf(PayloadTooLargeError);
  });
});
