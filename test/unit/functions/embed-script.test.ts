import { describe, expect, it } from 'vitest';
import { handler } from '#functions/embed-script';
import { HOST_SCRIPT, HOST_SCRIPT_VERSION } from '#lib/adapters/http/embed/host-script';
import { proxyEvent } from '#test/support/events';

const get = (query: Record<string, string> | null, headers: Record<string, string> = {}) =>
  handler(proxyEvent({ method: 'GET', path: '/embed.js', query, headers, authorizer: null }));

describe('embed-script handler', () => {
  it('serves the host script as JavaScript that any site may load', async () => {
    const result = await get({ v: HOST_SCRIPT_VERSION });
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe(HOST_SCRIPT);
    expect(result.headers).toMatchObject({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Access-Control-Allow-Origin': '*',
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
  });

  it('answers 304 to a browser that holds the script already', async () => {
    const result = await get(null, { 'If-None-Match': `"${HOST_SCRIPT_VERSION}"` });
    expect(result.statusCode).toBe(304);
    expect(result.body).toBe('');
  });
});
