import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { embedErrorRenderer, embedHeaders, htmlResponse, wantsJson } from '#lib/embed/http';
import { renderEmbedPage } from '#lib/embed/page';
import { EMBED_CSS, EMBED_CSS_HASH } from '#lib/embed/styles';
import { DEFAULT_FRAME_ANCESTORS } from '#lib/platform/config';
import { proxyEvent } from '#test/support/events';
import { storedSession } from '#test/support/fixtures';

const FRAME_ANCESTORS = 'https://app.example.com https://*.example.org:8443';

/** The CSP as a map from directive name to its sources. */
function csp(headers: Record<string, unknown> | undefined): Map<string, string[]> {
  const policy = String(headers?.['Content-Security-Policy'] ?? '');
  const directives = new Map<string, string[]>();
  for (const directive of policy.split(';')) {
    const [name, ...sources] = directive.trim().split(/\s+/);
    if (name) directives.set(name, sources);
  }
  return directives;
}

const styleHash = (css: string) => `'sha256-${createHash('sha256').update(css, 'utf8').digest('base64')}'`;

/** Header names in lower case, as a browser would compare them. */
const headerNames = (headers: Record<string, unknown> | undefined) =>
  Object.keys(headers ?? {}).map((name) => name.toLowerCase());

describe('embedHeaders', () => {
  const headers = embedHeaders(FRAME_ANCESTORS);
  const policy = csp(headers);

  it("denies everything by default (default-src 'none')", () => {
    expect(policy.get('default-src')).toEqual(["'none'"]);
  });

  it('allows the one stylesheet by the sha256 of EMBED_CSS', () => {
    expect(policy.get('style-src')).toEqual([styleHash(EMBED_CSS)]);
    expect(EMBED_CSS_HASH).toBe(styleHash(EMBED_CSS));
  });

  it('allows the inline style the page actually carries, byte for byte', () => {
    const html = renderEmbedPage({
      session: storedSession({ id: 's', boardId: 'b', userId: 'u', email: 'u@example.com', firstName: null }),
      board: { boardId: 'b', orgId: 'o', visibility: 'PUBLIC', name: 'B' },
    });
    const styles = [...html.matchAll(/<style>(.*?)<\/style>/gs)].map((m) => m[1] ?? '');
    expect(styles).toHaveLength(1);
    expect(policy.get('style-src')).toEqual([styleHash(styles[0] ?? '')]);
  });

  it("never allows 'unsafe-inline' nor 'unsafe-eval', and allows no script at all", () => {
    const text = String(headers['Content-Security-Policy']);
    expect(text).not.toContain('unsafe-inline');
    expect(text).not.toContain('unsafe-eval');
    expect(policy.has('script-src')).toBe(false);
  });

  it('locks down base URI and form targets, and allows avatar images over http(s)', () => {
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(policy.get('form-action')).toEqual(["'none'"]);
    expect(policy.get('img-src')).toEqual(['https:', 'http:']);
  });

  it('takes frame-ancestors from its argument', () => {
    expect(policy.get('frame-ancestors')).toEqual(['https://app.example.com', 'https://*.example.org:8443']);
    expect(csp(embedHeaders(DEFAULT_FRAME_ANCESTORS)).get('frame-ancestors')).toEqual(
      DEFAULT_FRAME_ANCESTORS.split(' '),
    );
  });

  it('sends no referrer, no caching and no MIME sniffing', () => {
    expect(headers['Referrer-Policy']).toBe('no-referrer');
    expect(headers['Cache-Control']).toBe('no-store');
    expect(headers['X-Content-Type-Options']).toBe('nosniff');
  });

  it('sends no X-Frame-Options, which would forbid the iframe the page exists for', () => {
    expect(headerNames(headers)).not.toContain('x-frame-options');
  });
});

describe('wantsJson', () => {
  const withAccept = (accept: string, name = 'Accept') => ({ headers: { [name]: accept } });

  it.each(['application/json', 'application/json; charset=utf-8', 'application/json, text/plain, */*'])(
    'is true for %j',
    (accept) => {
      expect(wantsJson(withAccept(accept))).toBe(true);
    },
  );

  it.each([
    'text/html',
    'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
    '*/*',
    '',
  ])('is false for %j', (accept) => {
    expect(wantsJson(withAccept(accept))).toBe(false);
  });

  it('is false without an Accept header', () => {
    expect(wantsJson({ headers: {} })).toBe(false);
    expect(wantsJson({ headers: { 'Content-Type': 'application/json' } })).toBe(false);
  });

  it.each(['accept', 'ACCEPT', 'aCcEpT'])('reads the header name %j case-insensitively', (name) => {
    expect(wantsJson(withAccept('application/json', name))).toBe(true);
  });
});

describe('htmlResponse', () => {
  it('answers text/html in UTF-8 with the given headers', () => {
    const result = htmlResponse(200, '<p>x</p>', embedHeaders(FRAME_ANCESTORS));
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe('<p>x</p>');
    expect(result.headers).toMatchObject({
      'Content-Type': 'text/html; charset=utf-8',
      'Referrer-Policy': 'no-referrer',
    });
  });
});

describe('embedErrorRenderer', () => {
  const htmlEvent = proxyEvent({ headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  const jsonEvent = proxyEvent({ headers: { accept: 'application/json' } });

  it('renders a styled HTML page with the status and the security headers', () => {
    const result = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS)(401, 'This embed link is not valid', {});
    expect(result.statusCode).toBe(401);
    expect(result.headers).toEqual({
      ...embedHeaders(FRAME_ANCESTORS),
      'Content-Type': 'text/html; charset=utf-8',
    });
    expect(result.body).toMatch(/^<!doctype html>/);
    expect(result.body).toContain('<span class="code">401</span>');
    expect(result.body).toContain('This embed link is not valid');
    expect(headerNames(result.headers)).not.toContain('x-frame-options');
  });

  it.each([
    [400, 'This embed link is incomplete'],
    [401, 'This board can’t be opened'],
    [404, 'This board is no longer available'],
    [503, 'Temporarily unavailable'],
    [500, 'Something went wrong'],
  ])('titles a %i page %j', (status, title) => {
    const result = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS)(status, 'message', {});
    expect(result.body).toContain(`<h1>${title}</h1>`);
  });

  it('renders HTML when the request has no Accept header', () => {
    const result = embedErrorRenderer(proxyEvent({ headers: {} }), FRAME_ANCESTORS)(400, 'No token', {});
    expect(result.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
  });

  it('escapes the message on the page', () => {
    const result = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS)(400, '<img src=x onerror=alert(1)>', {});
    expect(result.body).not.toContain('<img');
    expect(result.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('answers {error, message} JSON with the same security headers when JSON is wanted', () => {
    const result = embedErrorRenderer(jsonEvent, FRAME_ANCESTORS)(401, 'This embed link is not valid', {});
    expect(result.statusCode).toBe(401);
    expect(result.headers).toMatchObject({
      ...embedHeaders(FRAME_ANCESTORS),
      'Content-Type': 'application/json',
    });
    expect(JSON.parse(result.body)).toEqual({
      error: 'Unauthorized',
      message: 'This embed link is not valid',
    });
    expect(headerNames(result.headers)).not.toContain('x-frame-options');
  });

  it('passes extra headers such as Retry-After through, on the page and in JSON', () => {
    const extra = { 'Retry-After': '2' };
    const page = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS)(503, 'Retry shortly', extra);
    const json = embedErrorRenderer(jsonEvent, FRAME_ANCESTORS)(503, 'Retry shortly', extra);
    expect(page.headers?.['Retry-After']).toBe('2');
    expect(page.statusCode).toBe(503);
    expect(json.headers?.['Retry-After']).toBe('2');
    expect(JSON.parse(json.body)).toEqual({ error: 'Service Unavailable', message: 'Retry shortly' });
  });

  it('uses the frame ancestors it was given', () => {
    const result = embedErrorRenderer(htmlEvent, "'self'")(404, 'Gone', {});
    expect(csp(result.headers).get('frame-ancestors')).toEqual(["'self'"]);
  });
});
