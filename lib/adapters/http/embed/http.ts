import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ErrorRenderer } from '#lib/adapters/http/middlewares/http-errors';
import { headerValue, jsonResponse } from '#lib/adapters/http/response';
import { errorBody } from '#lib/adapters/http/status';
import type { Board } from '#lib/domain/board';
import { isEmbedOrigin } from '#lib/domain/embed-origins';
import * as DomainErrors from '#lib/domain/errors';
import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { FRAME_SCRIPT_HASH } from './frame-script';
import { type EmbedErrorCode, parsePresentation } from './i18n';
import { embedContext, renderEmbedError, renderEmbedPage } from './page';
import { EMBED_CSS_HASH } from './styles';

/**
 * Headers on every embed response. The CSP allows only the page's own stylesheet and script (by their
 * hashes) and avatar images; the page fetches nothing (`connect-src 'none'`), and `frame-ancestors`
 * decides who may frame it. There is deliberately no X-Frame-Options: it would forbid the very iframe
 * this page exists for. The URL holds a credential, hence no-referrer and no-store.
 */
export function embedHeaders(frameAncestors: string): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      `script-src ${FRAME_SCRIPT_HASH}`,
      `style-src ${EMBED_CSS_HASH}`,
      'img-src https: http:',
      "connect-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      `frame-ancestors ${frameAncestors}`,
    ].join('; '),
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  };
}

/**
 * Who may frame a board's embed pages: the board's own origins when it has a list, otherwise the stage's
 * `frame-ancestors`. The list is checked again here because it ends up in a header: an entry that is no
 * origin (written to the table by hand, say) is dropped, and a list left with none frames nowhere
 * (`'none'`) rather than falling back to the wider default.
 */
export function frameAncestorsFor(board: Board | undefined, stageDefault: string): string {
  const listed = board?.embedOrigins;
  if (!listed || listed.length === 0) return stageDefault;
  const origins = listed.filter(isEmbedOrigin);
  return origins.length > 0 ? origins.join(' ') : "'none'";
}

/** True when the client asked for JSON rather than a page (`Accept: application/json`). */
export function wantsJson(event: Pick<APIGatewayProxyEvent, 'headers'>): boolean {
  const accept = headerValue(event.headers, 'accept') ?? '';
  return /\bapplication\/json\b/i.test(accept) && !/\btext\/html\b/i.test(accept);
}

/** An HTML page with the embed headers. */
export function htmlResponse(
  status: number,
  html: string,
  headers: Record<string, string>,
): APIGatewayProxyResult {
  return {
    statusCode: status,
    headers: { ...headers, 'Content-Type': 'text/html; charset=utf-8' },
    body: html,
  };
}

/** The machine-readable code of each refusal the embed page knows; anything else is `internal`. */
const EMBED_ERROR_CODES: ReadonlyArray<readonly [abstract new (...args: never[]) => Error, EmbedErrorCode]> =
  [
    [DomainErrors.MissingTokenError, 'missing_token'],
    [DomainErrors.InvalidTokenError, 'invalid_token'],
    [DomainErrors.SessionExpiredError, 'session_expired'],
    [DomainErrors.SessionRevokedError, 'session_revoked'],
    [DomainErrors.SessionBoundElsewhereError, 'bound_to_another_browser'],
    [DomainErrors.EmbeddedBoardGoneError, 'board_gone'],
    [DomainErrors.DependencyUnavailableError, 'unavailable'],
  ];

/** The embed error code of a refusal: what the page's `error` message tells the host, and its text. */
export function embedErrorCode(error: unknown): EmbedErrorCode {
  return EMBED_ERROR_CODES.find(([type]) => error instanceof type)?.[1] ?? 'internal';
}

/** The board a refusal of a known session names, so its page is framed under the board's rules. */
function boardOf(error: unknown): Board | undefined {
  const known =
    error instanceof DomainErrors.SessionExpiredError ||
    error instanceof DomainErrors.SessionRevokedError ||
    error instanceof DomainErrors.SessionBoundElsewhereError;
  return known ? error.board : undefined;
}

/**
 * Renders errors of the embed route as a styled page in the host's language and theme, or as
 * `{error, message}` JSON when asked for. A refusal of a known session (expired, revoked, bound elsewhere)
 * is framed under its board's origins; every other error page (no token, an unknown one, an outage) under
 * the stage's.
 */
export function embedErrorRenderer(
  event: APIGatewayProxyEvent,
  frameAncestors: string,
  error?: unknown,
): ErrorRenderer {
  const base = embedHeaders(frameAncestorsFor(boardOf(error), frameAncestors));
  // A binding that may have been written goes with its secret, so that it is this browser's.
  if (error instanceof DomainErrors.UnconfirmedBindingError)
    base['Set-Cookie'] = bindingCookie(error.bindingSecret);
  return (status, message, extra) =>
    wantsJson(event)
      ? jsonResponse(status, errorBody(status, message), { ...base, ...extra })
      : htmlResponse(
          status,
          renderEmbedError(embedErrorCode(error), parsePresentation(event.queryStringParameters)),
          { ...base, ...extra },
        );
}

/**
 * The binding cookie: one per browser and host site, holding a random secret. `__Host-` (so `Secure`,
 * `Path=/`, no `Domain`: only this host, over https or loopback), `HttpOnly` (no script reads it),
 * `SameSite=None` (it must reach a page framed by another site) and `Partitioned`, so it lives in the
 * framing site's partition and works where third-party cookies are blocked. It lasts 400 days, the most
 * browsers keep a cookie, and every load of a bound session sets it again.
 */
export const BINDING_COOKIE = '__Host-embed_binding';
export const BINDING_COOKIE_MAX_AGE_SECONDS = 400 * 24 * 60 * 60;

/** The `Set-Cookie` value that stores `secret` in the browser. */
export function bindingCookie(secret: string): string {
  return `${BINDING_COOKIE}=${secret}; Path=/; Max-Age=${BINDING_COOKIE_MAX_AGE_SECONDS}; Secure; HttpOnly; SameSite=None; Partitioned`;
}

/**
 * Every value the request's binding cookies hold (a browser may send the name twice, partitioned and
 * not), from every `Cookie` header API Gateway passes. Their shape is checked by the use case.
 */
export function bindingCookieValues(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>,
): string[] {
  const headers: string[] = [];
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (name.toLowerCase() === 'cookie') headers.push(...(values ?? []));
  }
  if (headers.length === 0) {
    const single = headerValue(event.headers, 'cookie');
    if (single !== undefined) headers.push(single);
  }
  const values: string[] = [];
  for (const header of headers) {
    for (const pair of header.split(';')) {
      const at = pair.indexOf('=');
      if (at !== -1 && pair.slice(0, at).trim() === BINDING_COOKIE) values.push(pair.slice(at + 1).trim());
    }
  }
  return values;
}

/**
 * The answer to a usable embed link: the page in the host's language and theme (or the public context as
 * JSON when asked for), framed under the board's origins, with the binding cookie for a bound session.
 */
export function embedPageResponse(
  event: APIGatewayProxyEvent,
  view: EmbedView,
  options: { frameAncestors: string; now: Date },
): APIGatewayProxyResult {
  const headers = embedHeaders(frameAncestorsFor(view.board, options.frameAncestors));
  if (view.bindingSecret !== undefined) headers['Set-Cookie'] = bindingCookie(view.bindingSecret);
  if (wantsJson(event)) return jsonResponse(200, embedContext(view), headers);
  const presentation = parsePresentation(event.queryStringParameters);
  return htmlResponse(200, renderEmbedPage(view, { presentation, now: options.now }), headers);
}
