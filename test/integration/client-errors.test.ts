import { beforeAll, describe, expect, it } from 'vitest';
import { type RawResponse, rawRequest } from '#test/support/raw-http';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * Requests Node's HTTP parser refuses before any route sees them. They get the house JSON error and
 * headers like every other error, and the runtime keeps serving.
 */
const runtime = useTestRuntime();
let host: string;
let port: number;

beforeAll(async () => {
  ({ hostname: host } = new URL(runtime.baseUrl));
  port = Number(new URL(runtime.baseUrl).port);
});

function expectHouseError(response: RawResponse, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['content-security-policy']).toMatch(/^sandbox; frame-ancestors /);
  expect(response.headers['referrer-policy']).toBe('no-referrer');
  expect(response.headers.connection).toBe('close');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe('string');
}

describe('requests the HTTP parser refuses', () => {
  it('answers a 100 KB header with 431 JSON', async () => {
    const response = await rawRequest(
      host,
      port,
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100 * 1024)}\r\n\r\n`,
    );
    expectHouseError(response, 431, 'Request Header Fields Too Large');
  });

  it('answers a control character in a header value with 400 JSON', async () => {
    const response = await rawRequest(
      host,
      port,
      'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n',
    );
    expectHouseError(response, 400, 'Bad Request');
  });

  it('answers a lowercase method with 400 JSON', async () => {
    const response = await rawRequest(host, port, 'get /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expectHouseError(response, 400, 'Bad Request');
  });

  it('answers bytes that are not HTTP at all with 400 JSON', async () => {
    const response = await rawRequest(host, port, '\u0016\u0003\u0001\u0000\u00a5\u0001\r\n\r\n');
    expectHouseError(response, 400, 'Bad Request');
  });

  it('keeps serving afterwards', async () => {
    expect((await fetch(`${runtime.baseUrl}/health`)).status).toBe(200);
  });
});
