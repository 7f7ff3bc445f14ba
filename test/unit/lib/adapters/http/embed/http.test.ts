import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FRAME_SCRIPT, FRAME_SCRIPT_HASH } from '#lib/adapters/http/embed/frame-script';
import {
  BINDING_COOKIE,
  bindingCookie,
  bindingCookieValues,
  embedErrorCode,
  embedErrorRenderer,
  embedHeaders,
  embedPageResponse,
  frameAncestorsFor,
  htmlResponse,
  wantsJson,
} from '#lib/adapters/http/embed/http';
import { DEFAULT_PRESENTATION, TEXTS } from '#lib/adapters/http/embed/i18n';
import { renderEmbedError, renderEmbedPage } from '#lib/adapters/http/embed/page';
import { EMBED_CSS, EMBED_CSS_HASH } from '#lib/adapters/http/embed/styles';
import type { Board } from '#lib/domain/board';
import * as errors from '#lib/domain/errors';
import { DEFAULT_FRAME_ANCESTORS } from '#lib/platform/config';
import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { EMBED_REFUSALS } from '#test/support/embed-refusals';
import { embedEvent, proxyEvent } from '#test/support/events';
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
const scriptHash = styleHash;

const BOARD: Board = { boardId: 'b', orgId: 'o', visibility: 'PUBLIC', name: 'B' };
const VIEW: EmbedView = {
  session: storedSession({ id: 's', boardId: 'b', userId: 'u', email: 'u@example.com', firstName: null }),
  board: BOARD,
};
const NOW = new Date('2026-01-02T00:00:00.000Z');

/** The notice an error page shows the end user (its sentence and its action). */
const noticeOf = (html: string) => /<div class="notice"[\s\S]*?<\/div>/.exec(html)?.[0] ?? '';

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
    const html = renderEmbedPage(VIEW, { presentation: DEFAULT_PRESENTATION, now: NOW });
    const styles = [...html.matchAll(/<style>(.*?)<\/style>/gs)].map((m) => m[1] ?? '');
    expect(styles).toHaveLength(1);
    expect(policy.get('style-src')).toEqual([styleHash(styles[0] ?? '')]);
  });

  it('allows exactly one script, the page’s own, by the sha256 of FRAME_SCRIPT', () => {
    expect(policy.get('script-src')).toEqual([scriptHash(FRAME_SCRIPT)]);
    expect(FRAME_SCRIPT_HASH).toBe(scriptHash(FRAME_SCRIPT));
  });

  it.each([
    ['the board page', renderEmbedPage(VIEW, { presentation: DEFAULT_PRESENTATION, now: NOW })],
    ['an error page', renderEmbedError('invalid_token', DEFAULT_PRESENTATION)],
  ])('allows the inline script %s actually carries, byte for byte', (_label, html) => {
    const scripts = [...html.matchAll(/<script>(.*?)<\/script>/gs)].map((m) => m[1] ?? '');
    expect(scripts).toHaveLength(1);
    expect(policy.get('script-src')).toEqual([scriptHash(scripts[0] ?? '')]);
  });

  it("never allows 'unsafe-inline' nor 'unsafe-eval', nor any script source but the hash", () => {
    const text = String(headers['Content-Security-Policy']);
    expect(text).not.toContain('unsafe-inline');
    expect(text).not.toContain('unsafe-eval');
    expect(text).not.toContain('nonce-');
    expect(policy.get('script-src')).toHaveLength(1);
  });

  it("lets the page fetch nothing (connect-src 'none')", () => {
    expect(policy.get('connect-src')).toEqual(["'none'"]);
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
    const result = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS, new errors.InvalidTokenError())(
      401,
      'This embed link is not valid',
      {},
    );
    expect(result.statusCode).toBe(401);
    expect(result.headers).toEqual({
      ...embedHeaders(FRAME_ANCESTORS),
      'Content-Type': 'text/html; charset=utf-8',
    });
    expect(result.body).toMatch(/^<!doctype html>/);
    expect(result.body).toContain(`<h1>${TEXTS.en.notices.invalid_token.sentence}</h1>`);
    expect(noticeOf(result.body)).not.toContain('401');
    expect(headerNames(result.headers)).not.toContain('x-frame-options');
  });

  it('sets the binding cookie on the 503 of a binding that may have been written, and on no other error', () => {
    const secret = 'S'.repeat(43);
    const unconfirmed = embedErrorRenderer(
      htmlEvent,
      FRAME_ANCESTORS,
      new errors.UnconfirmedBindingError(secret),
    )(503, 'm', {});
    expect(unconfirmed.headers?.['Set-Cookie']).toBe(bindingCookie(secret));
    const plain = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS, new errors.StorageUnavailableError())(
      503,
      'm',
      {},
    );
    expect(plain.headers).not.toHaveProperty('Set-Cookie');
  });

  it.each([
    [400, new errors.MissingTokenError(), 'This link to the board is incomplete.'],
    [401, new errors.InvalidTokenError(), 'This link to the board is not valid.'],
    [404, new errors.EmbeddedBoardGoneError(), 'This board no longer exists.'],
    [503, new errors.StorageUnavailableError(), 'The board can’t be shown right now.'],
    [500, new Error('boom'), 'Something went wrong while opening the board.'],
  ])('answers %i with a page that says %j, and not its status', (status, error, sentence) => {
    const result = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS, error)(status, 'message', {});
    expect(result.statusCode).toBe(status);
    expect(result.body).toContain(`<h1>${sentence}</h1>`);
    expect(noticeOf(result.body)).not.toContain(String(status));
  });

  it('renders the page in the language and theme the embed URL asks for', () => {
    const event = embedEvent({ token: 'x', locale: 'de-AT', theme: 'dark' });
    const result = embedErrorRenderer(event, FRAME_ANCESTORS, new errors.SessionRevokedError())(401, 'm', {});
    expect(result.body).toMatch(/^<!doctype html>\n<html lang="de" data-theme="dark">/);
    expect(result.body).toContain(TEXTS.de.notices.session_revoked.sentence);
    expect(result.body).toContain('data-embed-code="session_revoked"');
  });

  it('answers JSON in English whatever the locale, as the API always does', () => {
    const event = embedEvent({ locale: 'fr' }, { Accept: 'application/json' });
    const result = embedErrorRenderer(event, FRAME_ANCESTORS, new errors.MissingTokenError())(
      400,
      'The embed link has no token',
      {},
    );
    expect(JSON.parse(result.body)).toEqual({ error: 'Bad Request', message: 'The embed link has no token' });
  });

  it.each([
    ['expired', new errors.SessionExpiredError({ ...BOARD, embedOrigins: ['https://app.acme.com'] })],
    ['revoked', new errors.SessionRevokedError({ ...BOARD, embedOrigins: ['https://app.acme.com'] })],
    [
      'bound elsewhere',
      new errors.SessionBoundElsewhereError({ ...BOARD, embedOrigins: ['https://app.acme.com'] }),
    ],
  ])('frames the refusal of a known session (%s) under its board’s origins', (_label, error) => {
    for (const event of [htmlEvent, jsonEvent]) {
      const result = embedErrorRenderer(event, FRAME_ANCESTORS, error)(401, error.message, {});
      expect(csp(result.headers).get('frame-ancestors')).toEqual(['https://app.acme.com']);
    }
  });

  it.each([
    ['no token', new errors.MissingTokenError()],
    ['an unknown token', new errors.InvalidTokenError()],
    ['a gone board', new errors.EmbeddedBoardGoneError()],
    ['an outage', new errors.StorageUnavailableError()],
    ['a bug', new Error('boom')],
    ['a refusal whose board is gone', new errors.SessionExpiredError(undefined)],
  ])('frames the error page of %s under the stage’s default', (_label, error) => {
    const result = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS, error)(401, 'm', {});
    expect(csp(result.headers).get('frame-ancestors')).toEqual(FRAME_ANCESTORS.split(' '));
  });

  it('renders HTML when the request has no Accept header', () => {
    const result = embedErrorRenderer(proxyEvent({ headers: {} }), FRAME_ANCESTORS)(400, 'No token', {});
    expect(result.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
  });

  it('shows its own text for the error, never the message it was given', () => {
    const result = embedErrorRenderer(htmlEvent, FRAME_ANCESTORS, new errors.MissingTokenError())(
      400,
      '<img src=x onerror=alert(1)>',
      {},
    );
    expect(result.body).not.toContain('<img');
    expect(result.body).not.toContain('onerror');
    expect(result.body).toContain(TEXTS.en.notices.missing_token.sentence);
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

describe('embedErrorCode', () => {
  it.each(EMBED_REFUSALS)('codes a refusal as %s', (code, error) => {
    expect(embedErrorCode(error)).toBe(code);
  });

  it.each([
    ['an unexpected error', new Error('bug')],
    ['nothing thrown', undefined],
  ])('codes %s as internal', (_case, error) => {
    expect(embedErrorCode(error)).toBe('internal');
  });
});

describe('frameAncestorsFor', () => {
  const STAGE = 'https: http://localhost:*';

  it('uses the board’s own origins when it has a list', () => {
    const board = { ...BOARD, embedOrigins: ['https://app.acme.com', 'https://*.acme.com'] };
    expect(frameAncestorsFor(board, STAGE)).toBe('https://app.acme.com https://*.acme.com');
  });

  it.each([
    ['no board', undefined],
    ['a board without a list', BOARD],
    ['a board with an empty list', { ...BOARD, embedOrigins: [] }],
  ])('uses the stage’s default for %s', (_label, board) => {
    expect(frameAncestorsFor(board, STAGE)).toBe(STAGE);
  });

  it('drops an entry that is no origin, so nothing stored by hand can inject into the header', () => {
    const board = {
      ...BOARD,
      embedOrigins: ["https://a.acme.com; script-src 'unsafe-inline'", 'https://b.acme.com'],
    };
    expect(frameAncestorsFor(board, STAGE)).toBe('https://b.acme.com');
  });

  it("frames nowhere ('none') when none of the board’s entries is an origin, rather than widening to the default", () => {
    expect(frameAncestorsFor({ ...BOARD, embedOrigins: ['*', 'https:'] }, STAGE)).toBe("'none'");
  });
});

describe('the binding cookie', () => {
  const secret = 'S'.repeat(43);

  it('is __Host-, Secure, HttpOnly, SameSite=None and Partitioned, for the whole host, for 400 days', () => {
    expect(bindingCookie(secret)).toBe(
      `__Host-embed_binding=${secret}; Path=/; Max-Age=34560000; Secure; HttpOnly; SameSite=None; Partitioned`,
    );
    expect(bindingCookie(secret)).not.toMatch(/Domain=/i);
  });

  it('is read from the Cookie header among other cookies', () => {
    const event = proxyEvent({ headers: { Cookie: `a=1; ${BINDING_COOKIE}=${secret}; b=2` } });
    expect(bindingCookieValues(event)).toEqual([secret]);
  });

  it('is read whatever the case of the header name, and from every Cookie header API Gateway passes', () => {
    const event = {
      headers: { cookie: `${BINDING_COOKIE}=two` },
      multiValueHeaders: { COOKIE: [`${BINDING_COOKIE}=one`, `x=y;${BINDING_COOKIE}=two`] },
    };
    expect(bindingCookieValues(event)).toEqual(['one', 'two']);
  });

  it('reads every value when the browser sends the name twice (partitioned and not)', () => {
    const event = proxyEvent({ headers: { Cookie: `${BINDING_COOKIE}=one; ${BINDING_COOKIE}=two` } });
    expect(bindingCookieValues(event)).toEqual(['one', 'two']);
  });

  it.each([
    ['no Cookie header', {}],
    ['other cookies only', { Cookie: 'session=1; embed_binding=x; __Host-embed_binding_old=y' }],
    ['a name without a value', { Cookie: BINDING_COOKIE }],
  ])('is absent with %s', (_label, headers) => {
    expect(bindingCookieValues(proxyEvent({ headers }))).toEqual([]);
  });
});

describe('embedPageResponse', () => {
  const options = { frameAncestors: DEFAULT_FRAME_ANCESTORS, now: NOW };

  it('answers the board page with the embed headers and no cookie for a session that does not bind', () => {
    const result = embedPageResponse(embedEvent({ token: 't' }), VIEW, options);
    expect(result.statusCode).toBe(200);
    expect(result.headers).toEqual({
      ...embedHeaders(DEFAULT_FRAME_ANCESTORS),
      'Content-Type': 'text/html; charset=utf-8',
    });
  });

  it('sets the binding cookie for a bound session, on the page and on JSON alike', () => {
    const bound = { ...VIEW, bindingSecret: 'S'.repeat(43) };
    for (const event of [
      embedEvent({ token: 't' }),
      embedEvent({ token: 't' }, { Accept: 'application/json' }),
    ]) {
      expect(embedPageResponse(event, bound, options).headers?.['Set-Cookie']).toBe(
        bindingCookie('S'.repeat(43)),
      );
    }
  });

  it('frames the page under the board’s own origins', () => {
    const view = { ...VIEW, board: { ...BOARD, embedOrigins: ['https://app.acme.com'] } };
    const result = embedPageResponse(embedEvent({ token: 't' }), view, options);
    expect(csp(result.headers).get('frame-ancestors')).toEqual(['https://app.acme.com']);
  });

  it('renders the page in the requested language and theme, never echoing the raw parameters', () => {
    const event = embedEvent({ token: 't', theme: 'dark"><script>', locale: 'es-MX"><b>' });
    const html = embedPageResponse(event, VIEW, options).body;
    expect(html).toContain('<html lang="en" data-theme="auto">');
    expect(html).not.toContain('<b>');
    expect(html).not.toContain('dark"');
    const spanish = embedPageResponse(
      embedEvent({ token: 't', theme: 'dark', locale: 'es-MX' }),
      VIEW,
      options,
    ).body;
    expect(spanish).toContain('<html lang="es" data-theme="dark">');
  });

  it('answers the public context as JSON when asked for', () => {
    const result = embedPageResponse(
      embedEvent({ token: 't' }, { Accept: 'application/json' }),
      VIEW,
      options,
    );
    expect(result.headers?.['Content-Type']).toBe('application/json');
    expect(JSON.parse(result.body).board).toEqual({ id: 'b', name: 'B' });
  });
});
