import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse } from '#lib/adapters/http/response';
import { appOrigin } from '#lib/domain/board-app';
import type { HandOff } from '#lib/use-cases/hand-off';
import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { MESSAGE_SOURCE } from './frame-script';
import { escapeHtml } from './html';
import { bindingCookie, embedHeaders, frameAncestorsFor, htmlResponse, wantsJson } from './http';
import { type Locale, parseLocale, parseTheme } from './i18n';
import { layout } from './page';
import { EMBED_CSS_HASH } from './styles';

/**
 * The hand-off page's only script, allowed by its hash. It first tells the host script (in the framing
 * page) which origin the frame is about to show, so the board application's messages are accepted from
 * that origin in that frame only, then submits the form: the token travels in a POST body, never in a URL,
 * the history or a `Referer`.
 */
export const HANDOFF_SCRIPT = `(() => {
  'use strict';
  const form = document.getElementById('embed-handoff');
  if (!form) return;
  if (window.parent !== window) {
    window.parent.postMessage({
      source: '${MESSAGE_SOURCE}',
      type: 'handoff',
      origin: form.getAttribute('data-app-origin'),
      sessionId: form.getAttribute('data-session-id'),
      boardId: form.getAttribute('data-board-id'),
    }, '*');
  }
  form.submit();
})();`;

/** CSP source allowing exactly HANDOFF_SCRIPT. */
export const HANDOFF_SCRIPT_HASH = `'sha256-${createHash('sha256').update(HANDOFF_SCRIPT).digest('base64')}'`;

/** What the page says for the instant it shows, and on its button when scripts are off. */
const HANDOFF_TEXTS: Readonly<Record<Locale, { opening: string; continue: string }>> = {
  en: { opening: 'Opening the board…', continue: 'Continue' },
  de: { opening: 'Board wird geöffnet…', continue: 'Weiter' },
  fr: { opening: 'Ouverture du tableau…', continue: 'Continuer' },
  es: { opening: 'Abriendo el tablero…', continue: 'Continuar' },
};

/**
 * The headers of the hand-off page: those of every embed page (no-store, no-referrer, the board's
 * frame-ancestors), with its own script's hash and a `form-action` naming only the app's origin.
 */
export function handOffHeaders(frameAncestors: string, appUrl: string): Record<string, string> {
  const headers = embedHeaders(frameAncestors);
  headers['Content-Security-Policy'] = [
    "default-src 'none'",
    `script-src ${HANDOFF_SCRIPT_HASH}`,
    `style-src ${EMBED_CSS_HASH}`,
    "connect-src 'none'",
    "base-uri 'none'",
    `form-action ${appOrigin(appUrl)}`,
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
  return headers;
}

/** The presentation fields the host gave on the embed URL, normalized, for the app to follow. */
function givenPresentation(query: APIGatewayProxyEvent['queryStringParameters']): Record<string, string> {
  const fields: Record<string, string> = {};
  if (query?.theme !== undefined) fields.theme = parseTheme(query.theme);
  if (query?.locale !== undefined) fields.locale = parseLocale(query.locale);
  return fields;
}

/** The page that POSTs the ID token (and the host's theme and locale, when given) to the app. */
export function renderHandOffPage(view: EmbedView, handoff: HandOff, fields: Record<string, string>): string {
  const locale = parseLocale(fields.locale);
  const texts = HANDOFF_TEXTS[locale];
  const inputs = Object.entries({ id_token: handoff.idToken, ...fields })
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
  return layout(
    { locale, theme: parseTheme(fields.theme) },
    texts.opening,
    { 'embed-state': 'handoff' },
    `<main class="embed notice-page">
<form id="embed-handoff" method="post" action="${escapeHtml(handoff.url)}" data-app-origin="${escapeHtml(appOrigin(handoff.url))}" data-session-id="${escapeHtml(view.session.id)}" data-board-id="${escapeHtml(view.board.boardId)}">
${inputs}
<p>${escapeHtml(texts.opening)}</p>
<noscript><button type="submit">${escapeHtml(texts.continue)}</button></noscript>
</form>
</main>`,
    HANDOFF_SCRIPT,
  );
}

/**
 * The answer to a usable embed link of a board with an application: the auto-submitting page, or
 * `{"handoff": {"url", "idToken"}}` for `Accept: application/json`. The binding cookie of a bound session
 * is set as on the built-in page.
 */
export function handOffResponse(
  event: APIGatewayProxyEvent,
  view: EmbedView,
  handoff: HandOff,
  options: { frameAncestors: string },
): APIGatewayProxyResult {
  const headers = handOffHeaders(frameAncestorsFor(view.board, options.frameAncestors), handoff.url);
  if (view.bindingSecret !== undefined) headers['Set-Cookie'] = bindingCookie(view.bindingSecret);
  if (wantsJson(event)) return jsonResponse(200, { handoff }, headers);
  return htmlResponse(
    200,
    renderHandOffPage(view, handoff, givenPresentation(event.queryStringParameters)),
    headers,
  );
}
