import middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { jsonBody } from '#lib/adapters/http/middlewares/json-body';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '#lib/domain/errors';
import { lambdaContext, proxyEvent } from '#test/support/events';

const MAX_BYTES = 64;

/** A handler that returns what the middleware left in `event.body`. */
const handler = middy<APIGatewayProxyEvent, unknown>()
  .use(jsonBody({ maxBytes: MAX_BYTES }))
  .handler(async (event) => event.body);

const invoke = (
  body: string | null,
  headers: Record<string, string> = { 'Content-Type': 'application/json' },
) => handler(proxyEvent({ body, headers }), lambdaContext());

describe('jsonBody: Content-Type', () => {
  it.each([
    ['application/json', { 'Content-Type': 'application/json' }],
    ['a charset parameter', { 'Content-Type': 'application/json; charset=utf-8' }],
    ['a parameter without a space', { 'Content-Type': 'application/json;charset=UTF-8' }],
    ['a lower-case header name', { 'content-type': 'application/json' }],
    ['an upper-case header name', { 'CONTENT-TYPE': 'application/json' }],
    ['an upper-case media type', { 'Content-Type': 'Application/JSON' }],
  ])('accepts %s', async (_name, headers) => {
    await expect(invoke('{"a":1}', headers)).resolves.toEqual({ a: 1 });
  });

  it('refuses a body without a Content-Type with UnsupportedMediaTypeError (415)', async () => {
    await expect(invoke('{"a":1}', {})).rejects.toBeInstanceOf(UnsupportedMediaTypeError);
  });

  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/jsonp',
    'application/json-patch+json',
    'text/json',
    '',
  ])('refuses a Content-Type of %j with UnsupportedMediaTypeError (415)', async (type) => {
    await expect(invoke('{"a":1}', { 'Content-Type': type })).rejects.toBeInstanceOf(
      UnsupportedMediaTypeError,
    );
  });

  it('refuses the wrong media type before looking at the body', async () => {
    await expect(invoke('not json', { 'Content-Type': 'text/plain' })).rejects.toBeInstanceOf(
      UnsupportedMediaTypeError,
    );
    await expect(invoke(null, {})).rejects.toBeInstanceOf(UnsupportedMediaTypeError);
  });

  it('answers 415, not a crash, when API Gateway passes headers as null', async () => {
    const event = { ...proxyEvent({ body: '{}' }), headers: null } as unknown as APIGatewayProxyEvent;
    await expect(handler(event, lambdaContext())).rejects.toBeInstanceOf(UnsupportedMediaTypeError);
  });
});

describe('jsonBody: size', () => {
  it('accepts a body of exactly maxBytes and refuses one byte more with PayloadTooLargeError (413)', async () => {
    const body = (bytes: number) => `{"s":"${'x'.repeat(bytes - 8)}"}`;
    expect(Buffer.byteLength(body(MAX_BYTES))).toBe(MAX_BYTES);
    await expect(invoke(body(MAX_BYTES))).resolves.toMatchObject({ s: expect.any(String) });
    const error = await invoke(body(MAX_BYTES + 1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as Error).message).toContain(String(MAX_BYTES));
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const body = `{"s":"${'é'.repeat(30)}"}`;
    expect(body.length).toBeLessThanOrEqual(MAX_BYTES);
    await expect(invoke(body)).rejects.toBeInstanceOf(PayloadTooLargeError);
  });

  it('measures a base64-encoded body after decoding it', async () => {
    const raw = `{"s":"${'x'.repeat(MAX_BYTES - 8)}"}`;
    const encoded = Buffer.from(raw).toString('base64');
    expect(encoded.length).toBeGreaterThan(MAX_BYTES);
    const event = proxyEvent({ body: encoded, isBase64Encoded: true });
    await expect(handler(event, lambdaContext())).resolves.toMatchObject({ s: expect.any(String) });
  });
});

describe('jsonBody: syntax', () => {
  it.each([
    ['a missing body', null, 'Request body is empty; send a JSON object'],
    ['an empty body', '', 'Request body is empty; send a JSON object'],
    ['a blank body', '  \n ', 'Request body is empty; send a JSON object'],
    [
      'JSON that ends too soon',
      '{"a":',
      'Request body is not valid JSON: it ends too soon, at line 1, column 6 (position 5)',
    ],
    [
      'a trailing comma',
      '{"a":1,}',
      'Request body is not valid JSON: unexpected character at line 1, column 8 (position 7)',
    ],
    [
      'a missing comma on a later line',
      '{\n  "a": 1\n  "b": 2\n}',
      'Request body is not valid JSON: unexpected character at line 3, column 3 (position 13)',
    ],
    ['an array', '[{"a":1}]', 'Request body must be a JSON object'],
    ['a string', '"hello"', 'Request body must be a JSON object'],
    ['a number', '42', 'Request body must be a JSON object'],
    ['null', 'null', 'Request body must be a JSON object'],
  ])('refuses %s with ValidationError (400)', async (_name, body, message) => {
    const error = await invoke(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe(message);
  });

  it('decodes a base64-encoded body', async () => {
    const event = proxyEvent({
      body: Buffer.from('{"name":"Zoë"}').toString('base64'),
      isBase64Encoded: true,
    });
    await expect(handler(event, lambdaContext())).resolves.toEqual({ name: 'Zoë' });
  });

  it('parses "__proto__" as an own key without changing the prototype', async () => {
    const parsed = (await invoke('{"__proto__":{"polluted":true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
