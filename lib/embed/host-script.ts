import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { headerValue } from '#lib/http/response';
import { MESSAGE_SOURCE } from './frame-script';

/**
 * `GET /embed.js`: the script host pages load to embed a board. It defines
 * `window.EmbedSession.mount(target, options)`, which creates the iframe with the documented attributes,
 * sizes it to the height the embed page reports (`height: "auto"`, the default), and calls the host's
 * callbacks for the page's messages, accepting only those posted by its own frame from the embed URL's
 * origin. Dependency-free ES2020, served exactly as written here: the bytes are what the quickstart's
 * Subresource Integrity hash pins, so they never go through a bundler.
 */
export const HOST_SCRIPT = `/*! embed-session host script: EmbedSession.mount(target, options). See docs/embedding.md. */
(() => {
  'use strict';
  if (window.EmbedSession) return;
  const SOURCE = '${MESSAGE_SOURCE}';
  const SANDBOX = 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox';
  const call = (callback, ...args) => {
    if (typeof callback !== 'function') return;
    try {
      callback(...args);
    } catch (error) {
      // A failing callback must not stop the others; the error still reaches the console.
      setTimeout(() => {
        throw error;
      });
    }
  };
  const pixels = (value) =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
  const mount = (target, options) => {
    const element = typeof target === 'string' ? document.querySelector(target) : target;
    if (!element || typeof element.appendChild !== 'function') {
      throw new TypeError('EmbedSession.mount: target must be an element or a selector that matches one');
    }
    const settings = options || {};
    if (typeof settings.url !== 'string') throw new TypeError('EmbedSession.mount: options.url is required');
    const url = new URL(settings.url, document.baseURI);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new TypeError('EmbedSession.mount: options.url must be an http(s) URL');
    }
    const auto = settings.height === undefined || settings.height === 'auto';
    const fixed = pixels(settings.height);
    if (!auto && fixed === undefined) {
      throw new TypeError('EmbedSession.mount: options.height must be "auto" or a number of pixels');
    }
    const iframe = document.createElement('iframe');
    iframe.setAttribute('src', url.href);
    iframe.setAttribute('title', typeof settings.title === 'string' && settings.title ? settings.title : 'Board');
    iframe.setAttribute('referrerpolicy', 'no-referrer');
    iframe.setAttribute('sandbox', SANDBOX);
    iframe.setAttribute('allow', '');
    iframe.setAttribute('loading', 'lazy');
    iframe.style.display = 'block';
    iframe.style.width = '100%';
    iframe.style.border = '0';
    iframe.style.height = (auto ? 150 : fixed) + 'px';
    // The board application's origin, once the embed page (and only it) announced the hand-off to it.
    let appOrigin = null;
    // An application posts ready on each of its pages, and an end may be said twice (by the application,
    // then by the view it goes to): the host hears the board shown once, and its end once, per mount.
    let shown = false;
    let ended = false;
    const originOf = (value) => {
      try {
        const parsed = new URL(value);
        return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
      } catch (_) {
        return null;
      }
    };
    const onMessage = (event) => {
      // Only our own frame, and only from the embed page's origin or the app it handed over to.
      if (event.source !== iframe.contentWindow) return;
      const fromEmbed = event.origin === url.origin;
      if (!fromEmbed && (appOrigin === null || event.origin !== appOrigin)) return;
      const data = event.data;
      if (!data || typeof data !== 'object' || data.source !== SOURCE) return;
      if (data.type === 'handoff') {
        if (fromEmbed && typeof data.origin === 'string') appOrigin = originOf(data.origin);
        return;
      }
      const height = pixels(data.height);
      if (auto && height !== undefined) iframe.style.height = height + 'px';
      const ids = {};
      if (typeof data.sessionId === 'string') ids.sessionId = data.sessionId;
      if (typeof data.boardId === 'string') ids.boardId = data.boardId;
      if (data.type === 'ready' && !shown) {
        shown = true;
        call(settings.onReady, Object.assign(ids, { height: height }));
      } else if ((data.type === 'resize' || data.type === 'ready') && height !== undefined) {
        call(settings.onResize, height);
      } else if ((data.type === 'expired' || data.type === 'revoked') && !ended) {
        ended = true;
        call(data.type === 'expired' ? settings.onExpired : settings.onRevoked);
      } else if (data.type === 'error') {
        call(settings.onError, { code: typeof data.code === 'string' ? data.code : 'internal', height: height });
      }
    };
    window.addEventListener('message', onMessage);
    element.appendChild(iframe);
    return {
      iframe: iframe,
      destroy: () => {
        window.removeEventListener('message', onMessage);
        iframe.remove();
      },
    };
  };
  window.EmbedSession = Object.freeze({ mount: mount });
})();
`;

/** The script's content address: the first 16 hex digits of its SHA-256, its `?v=` and its ETag. */
export const HOST_SCRIPT_VERSION = createHash('sha256').update(HOST_SCRIPT).digest('hex').slice(0, 16);

/** The script's Subresource Integrity value, as the quickstart's `integrity` attribute carries it. */
export const HOST_SCRIPT_INTEGRITY = `sha384-${createHash('sha384').update(HOST_SCRIPT).digest('base64')}`;

/** The path the script is served at, with its version: the URL the quickstart tells hosts to use. */
export const HOST_SCRIPT_PATH = `/embed.js?v=${HOST_SCRIPT_VERSION}`;

/**
 * How long browsers and CDNs keep the script: a year, immutable, at the versioned URL (`?v=` naming these
 * bytes, so a new script comes with a new URL); an hour, revalidated by ETag, at any other.
 */
export const HOST_SCRIPT_CACHE = {
  versioned: 'public, max-age=31536000, immutable',
  unversioned: 'public, max-age=3600',
} as const;

const ETAG = `"${HOST_SCRIPT_VERSION}"`;

/** True when an `If-None-Match` header names this script's ETag (or `*`), weak or strong. */
function matchesEtag(ifNoneMatch: string | undefined): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === ETAG || tag === '*');
}

/**
 * The answer to `GET /embed.js`: the script with its cache lifetime and ETag, `304` when the browser
 * holds it already, readable from any origin (`Access-Control-Allow-Origin: *`, needed for the integrity
 * check of a cross-origin script, and `Cross-Origin-Resource-Policy: cross-origin`).
 */
export function hostScriptResponse(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'queryStringParameters'>,
): APIGatewayProxyResult {
  const versioned = event.queryStringParameters?.v === HOST_SCRIPT_VERSION;
  const headers = {
    'Content-Type': 'text/javascript; charset=utf-8',
    'Cache-Control': versioned ? HOST_SCRIPT_CACHE.versioned : HOST_SCRIPT_CACHE.unversioned,
    ETag: ETAG,
    'Access-Control-Allow-Origin': '*',
    'Cross-Origin-Resource-Policy': 'cross-origin',
    'X-Content-Type-Options': 'nosniff',
  };
  if (matchesEtag(headerValue(event.headers, 'if-none-match'))) {
    return { statusCode: 304, headers, body: '' };
  }
  return { statusCode: 200, headers, body: HOST_SCRIPT };
}
