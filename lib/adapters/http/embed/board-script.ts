import type { APIGatewayProxyResult } from 'aws-lambda';
import { MESSAGE_SOURCE } from './frame-script';
import { EMBED_ERROR_CODES } from './i18n';

/** How often the script asks the application's watch endpoint whether its session still lives. */
export const WATCH_INTERVAL_MS = 2000;

/**
 * Where the ended view is, relative to this script's own URL: `ENDED_VIEW_PATH` of ./ended.ts (a test holds
 * them together), written out so the scripts' function bundles none of the pages.
 */
export const ENDED_VIEW_RELATIVE = 'embed/ended';

/**
 * `GET /embed-board.js`: the script a board's own application loads once the embed page handed the user
 * to it, the browser half of ending with the session (docs/board-apps.md):
 *
 * - `EmbedBoard.ready({sessionId, boardId, expiresIn, locale, theme, watch})` tells the host page the
 *   board is shown (with `expiresInMs`, the time left, when given `expiresIn`) and from then on reports
 *   the page's height as it changes (`resize`). With `expiresIn`
 *   (the seconds the session has left, which the application's server counts on the service's clock) it
 *   ends the page when they have passed, counted from when the page loaded, so neither the server's nor the
 *   browser's clock matters; with `watch` (a URL of the application answering `{"active": false, "reason"}`
 *   once its session ended) it asks every 2 s while the page is visible, and when it becomes visible.
 * - `EmbedBoard.ended(reason)` posts `expired` or `revoked` and sends the frame to the service's view of
 *   that end (`/embed/ended`, next to this script), in the session's `locale` and `theme`.
 * - `EmbedBoard.expired()` and `EmbedBoard.revoked()` only post, as they always did.
 * - `EmbedBoard.error(code)` posts `error` with one of the embed page's codes (`internal` for any other),
 *   for a page of the application that shows no board: a hand-off it refused (`invalid_token`), its own
 *   outage (`unavailable`).
 *
 * The envelope is the built-in page's, so the host script treats both alike; it accepts these only from
 * the origin the embed page announced, in that frame. Dependency-free ES2020.
 */
export const BOARD_SCRIPT = `/*! embed-session board script: EmbedBoard.ready(options). See docs/board-apps.md. */
(() => {
  'use strict';
  if (window.EmbedBoard) return;
  const doc = document;
  const framed = window.parent !== window;
  // The service serves its ended view next to this script (under a stage path too, such as /prod).
  const src = doc.currentScript && doc.currentScript.src;
  const endedView = src ? new URL('${ENDED_VIEW_RELATIVE}', new URL('.', src)) : null;
  let ids = {};
  let look = {};
  let reported = -1;
  let observer = null;
  let over = false;
  let stop = () => undefined;
  const post = (type, extra) => {
    if (framed) window.parent.postMessage(Object.assign({ source: '${MESSAGE_SOURCE}', type: type }, ids, extra), '*');
  };
  const measure = () => Math.ceil(doc.body.getBoundingClientRect().height);
  const ended = (reason) => {
    if (over) return;
    over = true;
    stop();
    const known = reason === 'expired' || reason === 'revoked';
    if (known) post(reason, {});
    if (endedView === null) return;
    const url = new URL(endedView.href);
    if (known) url.searchParams.set('reason', reason);
    if (look.locale) url.searchParams.set('locale', look.locale);
    if (look.theme) url.searchParams.set('theme', look.theme);
    window.location.replace(url.href);
  };
  // The end, counted from this page's load with relative timers: a clock that is off changes nothing.
  // Short steps and visibilitychange, so a throttled tab or a sleeping laptop notices soon after waking.
  const scheduleEnd = (ms) => {
    const deadline = Date.now() + ms;
    let timer = 0;
    const check = () => {
      clearTimeout(timer);
      const left = deadline - Date.now();
      if (left <= 0) ended('expired');
      else timer = setTimeout(check, Math.min(left, 60000));
    };
    doc.addEventListener('visibilitychange', check);
    check();
    return () => {
      clearTimeout(timer);
      doc.removeEventListener('visibilitychange', check);
    };
  };
  // The application's own word on its session: an end it learned (a back-channel logout) reaches the page.
  const watchSession = (url) => {
    let timer = 0;
    let asking = false;
    const ask = () => {
      clearTimeout(timer);
      if (over) return;
      if (doc.visibilityState === 'hidden') return;
      timer = setTimeout(ask, ${WATCH_INTERVAL_MS});
      if (asking) return;
      asking = true;
      fetch(url, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } })
        .then((response) => (response.ok ? response.json() : null))
        .then((state) => {
          if (state && state.active === false) ended(state.reason);
        })
        .catch(() => undefined)
        .then(() => {
          asking = false;
        });
    };
    doc.addEventListener('visibilitychange', ask);
    timer = setTimeout(ask, ${WATCH_INTERVAL_MS});
    return () => {
      clearTimeout(timer);
      doc.removeEventListener('visibilitychange', ask);
    };
  };
  const ready = (options) => {
    const given = options || {};
    ids = {};
    if (typeof given.sessionId === 'string') ids.sessionId = given.sessionId;
    if (typeof given.boardId === 'string') ids.boardId = given.boardId;
    look = {};
    if (typeof given.locale === 'string') look.locale = given.locale;
    if (typeof given.theme === 'string') look.theme = given.theme;
    reported = measure();
    // The time left goes to the host too (expiresInMs, as the built-in page says it), for its renewal.
    const seconds = given.expiresIn;
    const known = typeof seconds === 'number' && Number.isFinite(seconds);
    const ms = known ? Math.floor(Math.max(0, seconds) * 1000) : 0;
    post('ready', known ? { height: reported, expiresInMs: ms } : { height: reported });
    if (observer === null && typeof ResizeObserver === 'function') {
      observer = new ResizeObserver(() => {
        const height = measure();
        if (height === reported) return;
        reported = height;
        post('resize', { height: height });
      });
      observer.observe(doc.body);
    }
    stop();
    const stops = [];
    if (known) stops.push(scheduleEnd(ms));
    if (typeof given.watch === 'string' && given.watch) stops.push(watchSession(given.watch));
    stop = () => {
      for (const each of stops) each();
    };
  };
  // The embed page's codes, so the host hears the application's refusal as it hears the service's.
  const CODES = ${JSON.stringify(EMBED_ERROR_CODES)};
  window.EmbedBoard = Object.freeze({
    ready: ready,
    ended: ended,
    expired: () => post('expired', {}),
    revoked: () => post('revoked', {}),
    error: (code) => post('error', { code: CODES.indexOf(code) === -1 ? 'internal' : code, height: measure() }),
  });
})();
`;

/** The answer to `GET /embed-board.js`: public, cacheable for an hour, readable from any origin. */
export function boardScriptResponse(): APIGatewayProxyResult {
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=3600',
      'Access-Control-Allow-Origin': '*',
      'Cross-Origin-Resource-Policy': 'cross-origin',
      'X-Content-Type-Options': 'nosniff',
    },
    body: BOARD_SCRIPT,
  };
}
