import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ErrorRenderer } from '#lib/http/middlewares/http-errors';
import { headerValue, jsonResponse } from '#lib/http/response';
import { errorBody } from '#lib/http/status';
import { renderEmbedError } from './page';
import { EMBED_CSS_HASH } from './styles';

/**
 * Headers on every embed response. The CSP allows only the page's own stylesheet and avatar images,
 * and `frame-ancestors` decides who may frame it. There is deliberately no X-Frame-Options: it would
 * forbid the very iframe this page exists for. The URL holds a credential, hence no-referrer and no-store.
 */
export function embedHeaders(frameAncestors: string): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      `style-src ${EMBED_CSS_HASH}`,
      'img-src https: http:',
      "base-uri 'none'",
      "form-action 'none'",
      `frame-ancestors ${frameAncestors}`,
    ].join('; '),
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  };
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

const ERROR_TITLES: Record<number, string> = {
  400: 'This embed link is incomplete',
  401: 'This board can’t be opened',
  404: 'This board is no longer available',
  503: 'Temporarily unavailable',
};

/** Renders errors of the embed route as a styled page, or as `{error, message}` JSON when asked for. */
export function embedErrorRenderer(event: APIGatewayProxyEvent, frameAncestors: string): ErrorRenderer {
  const base = embedHeaders(frameAncestors);
  return (status, message, extra) =>
    wantsJson(event)
      ? jsonResponse(status, errorBody(status, message), { ...base, ...extra })
      : htmlResponse(
          status,
          renderEmbedError(status, ERROR_TITLES[status] ?? 'Something went wrong', message),
          {
            ...base,
            ...extra,
          },
        );
}
