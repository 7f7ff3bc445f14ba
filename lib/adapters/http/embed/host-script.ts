import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { headerValue } from '#lib/adapters/http/response';
import { MESSAGE_SOURCE } from './frame-script';
import { EMBED_ERROR_CODES } from './i18n';

/**
 * The codes `onError` reports: the embed page's own (`EMBED_ERROR_CODES`, the same on both kinds of board),
 * then the host script's, for what only the framing page can see.
 */
export const HOST_ERROR_CODES = [...EMBED_ERROR_CODES, 'ready_timeout', 'renewal_failed'] as const;
export type HostErrorCode = (typeof HOST_ERROR_CODES)[number];

/** How long a frame may take to say anything before `onError({code: 'ready_timeout'})`, by default. */
export const READY_TIMEOUT_MS = 15_000;

/** The waits between a renewal's attempts: four attempts, then `onError({code: 'renewal_failed'})`. */
export const RENEWAL_RETRY_DELAYS_MS = [1000, 2000, 4000] as const;

/** The name of the channel (and the prefix of the Web Lock) the page's tabs and frames renew through. */
export const RENEWAL_CHANNEL = 'embed-session-renewal';

/**
 * What the host developer reads for each code, in `onError`'s `message`: what happened, what to check.
 * Plain ASCII, as the script's bytes must be.
 */
const ERROR_MESSAGES: Readonly<Record<HostErrorCode, string>> = {
  missing_token: 'The embed URL has no token.',
  invalid_token: 'The embed link is not valid: unknown, or refused by the board application.',
  session_expired: 'The session had already expired when the frame opened its link.',
  session_revoked: 'The session was revoked.',
  bound_to_another_browser: 'The link is bound to another browser, which opened it first (bindToBrowser).',
  board_gone: 'The board no longer exists.',
  unavailable: 'The embed service cannot be reached right now; a reload may work.',
  internal: 'The embed service failed to show the board.',
  ready_timeout:
    'The frame did not report within the readyTimeout: framing refused (the embed origins of the board, your frame-src), a network failure, or a board application that shows no board.',
  renewal_failed: 'No new embed link could be obtained from fetchEmbedUrl and shown.',
};

/**
 * The host script's logic, `createEmbedSession(window)`, as the source text of one function: `/embed.js`
 * runs it on its page (`window.EmbedSession`), and the npm package `@embed-session/embed` ships these same
 * bytes as its runtime (embed/build.ts writes them), so both behave alike. It returns `{ mount }`:
 * `mount(target, options)` creates the iframe with the documented attributes, sizes it to the height the
 * frame reports (`height: "auto"`, the default), calls the host's callbacks for the frame's messages
 * (only those its own frame posts, from the embed URL's origin or the board application's it announced),
 * reports a frame that says nothing within `readyTimeout` and, given `fetchEmbedUrl`, renews the session
 * before it ends: the new link loads out of sight and takes the old one's place once it is ready.
 * Dependency-free ES2020, never bundled.
 */
export const HOST_CORE = `function createEmbedSession(window) {
  'use strict';
  const document = window.document;
  const SOURCE = '${MESSAGE_SOURCE}';
  const SANDBOX = 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox';
  const READY_TIMEOUT = ${READY_TIMEOUT_MS};
  const RETRY_DELAYS = ${JSON.stringify(RENEWAL_RETRY_DELAYS_MS)};
  const CHANNEL = '${RENEWAL_CHANNEL}';
  const MESSAGES = ${JSON.stringify(ERROR_MESSAGES, null, 2).replace(/\n/g, '\n  ')};
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
  const httpUrl = (value) => {
    const url = new URL(value, document.baseURI);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new TypeError('EmbedSession.mount: options.url must be an http(s) URL');
    }
    return url;
  };
  const originOf = (value) => {
    try {
      return httpUrl(value).origin;
    } catch (_) {
      return null;
    }
  };
  const messageOf = (code) => (Object.prototype.hasOwnProperty.call(MESSAGES, code) ? MESSAGES[code] : code);
  // Calls run once ms have passed, counted with relative timers in steps of at most a minute: a session of
  // 30 days outlasts what one timer holds, a sleeping laptop catches up on waking, and the browser's clock
  // being off changes nothing. Returns what cancels it.
  const after = (ms, run) => {
    const deadline = Date.now() + ms;
    let timer = 0;
    const check = () => {
      const left = deadline - Date.now();
      if (left <= 0) run();
      else timer = setTimeout(check, Math.min(left, 60000));
    };
    timer = setTimeout(check, Math.max(0, Math.min(ms, 60000)));
    return () => clearTimeout(timer);
  };

  // Renewals are shared by every mount of this page and, through a BroadcastChannel and a Web Lock per
  // session, by the origin's other tabs and frames: one of them asks fetchEmbedUrl, the others take its
  // link. Keyed by the session's id (or, before the frame named it, by the link itself).
  const renewed = new Map();
  const underway = new Map();
  const elsewhere = new Map();
  const holders = new Set();
  let channel;
  const share = (message) => {
    if (channel) channel.postMessage(Object.assign({ source: SOURCE }, message));
  };
  const taken = (key, url) => {
    renewed.set(key, url);
    for (const holder of holders) holder(key);
  };
  const hear = (event) => {
    const data = event.data;
    if (!data || data.source !== SOURCE || typeof data.key !== 'string') return;
    if (data.type === 'renewing') {
      if (!elsewhere.has(data.key)) elsewhere.set(data.key, []);
      return;
    }
    const waiting = elsewhere.get(data.key) || [];
    elsewhere.delete(data.key);
    const url = data.type === 'renewed' && typeof data.url === 'string' ? data.url : null;
    for (const resolve of waiting) resolve(url);
    if (url) taken(data.key, url);
  };
  const openChannel = () => {
    if (channel !== undefined) return;
    channel = null;
    try {
      channel = new window.BroadcastChannel(CHANNEL);
      channel.onmessage = hear;
    } catch (_) {
      channel = null;
    }
  };
  // fetchEmbedUrl's answer, or a rejection when it throws, rejects, takes longer than ms or is no string.
  const ask = (fetchEmbedUrl, ms) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('fetchEmbedUrl did not answer in time')), ms);
      Promise.resolve()
        .then(fetchEmbedUrl)
        .then((url) => {
          if (typeof url !== 'string') throw new Error('fetchEmbedUrl did not give a URL');
          return url;
        })
        .then(resolve, reject)
        .then(() => clearTimeout(timer));
    });
  const obtain = (key, fetchEmbedUrl, ms) => {
    if (renewed.has(key)) return Promise.resolve(renewed.get(key));
    if (underway.has(key)) return underway.get(key);
    const fetchAndShare = () => {
      share({ type: 'renewing', key: key });
      return ask(fetchEmbedUrl, ms).then(
        (url) => {
          share({ type: 'renewed', key: key, url: url });
          taken(key, url);
          return url;
        },
        (error) => {
          share({ type: 'failed', key: key });
          throw error;
        },
      );
    };
    const locks = window.navigator && window.navigator.locks;
    const run =
      locks && typeof locks.request === 'function' && channel
        ? locks.request(CHANNEL + ':' + key, () => {
            if (renewed.has(key)) return renewed.get(key);
            const waiting = elsewhere.get(key);
            if (!waiting) return fetchAndShare();
            // Another tab renewed and let go of the lock: its answer is on its way, unless that tab closed
            // first, which ms tells (the next attempt then asks fetchEmbedUrl itself).
            return new Promise((resolve) => {
              waiting.push(resolve);
              setTimeout(() => {
                if (elsewhere.get(key) === waiting) elsewhere.delete(key);
                resolve(null);
              }, ms);
            }).then((url) => {
              if (url === null) throw new Error('the renewal in another tab failed');
              return url;
            });
          })
        : fetchAndShare();
    underway.set(key, run);
    const done = () => underway.delete(key);
    run.then(done, done);
    return run;
  };

  const mount = (target, options) => {
    const element = typeof target === 'string' ? document.querySelector(target) : target;
    if (!element || typeof element.appendChild !== 'function') {
      throw new TypeError('EmbedSession.mount: target must be an element or a selector that matches one');
    }
    const settings = options || {};
    const fetchEmbedUrl = settings.fetchEmbedUrl;
    if (fetchEmbedUrl !== undefined && typeof fetchEmbedUrl !== 'function') {
      throw new TypeError('EmbedSession.mount: options.fetchEmbedUrl must be a function');
    }
    if (typeof settings.url !== 'string' && !(settings.url === undefined && fetchEmbedUrl)) {
      throw new TypeError('EmbedSession.mount: options.url is required (or options.fetchEmbedUrl)');
    }
    const first = settings.url === undefined ? null : httpUrl(settings.url);
    const auto = settings.height === undefined || settings.height === 'auto';
    const fixed = pixels(settings.height);
    if (!auto && fixed === undefined) {
      throw new TypeError('EmbedSession.mount: options.height must be "auto" or a number of pixels');
    }
    const timeout = settings.readyTimeout === undefined ? READY_TIMEOUT : settings.readyTimeout;
    if (typeof timeout !== 'number' || !(timeout > 0)) {
      throw new TypeError('EmbedSession.mount: options.readyTimeout must be a number of milliseconds');
    }
    const title = typeof settings.title === 'string' && settings.title ? settings.title : 'Board';
    // The frame shown, and the one loading a renewed link out of sight; each with its link, the board
    // application's origin once its embed page (and only it) announced the hand-off, and its ready timer.
    let shown = null;
    let next = null;
    let session = null;
    // The host hears the board shown once, and its end once, per mount: an application posts ready on each
    // of its pages, an end may be said twice (by the application, then by the view it goes to), and a
    // renewed frame's ready only resizes.
    let said = false;
    let over = false;
    let heard = false;
    let expired = false;
    let revoked = false;
    let destroyed = false;
    let renewing = false;
    let gaveUp = false;
    let attempts = 0;
    let round = 0;
    let retry = 0;
    let stopLead = () => undefined;
    let observer = null;
    const canRenew = () => typeof fetchEmbedUrl === 'function' && !revoked && !gaveUp && !destroyed;
    const frameFor = (url, hidden) => {
      const iframe = document.createElement('iframe');
      iframe.setAttribute('src', url.href);
      iframe.setAttribute('title', title);
      iframe.setAttribute('referrerpolicy', 'no-referrer');
      iframe.setAttribute('sandbox', SANDBOX);
      iframe.setAttribute('allow', '');
      const style = iframe.style;
      style.display = 'block';
      style.width = '100%';
      style.border = '0';
      if (hidden) {
        // Over the shown frame, at its size, invisible and out of reach until it is ready.
        const width = shown.iframe.offsetWidth;
        iframe.setAttribute('aria-hidden', 'true');
        iframe.setAttribute('inert', '');
        style.position = 'absolute';
        style.opacity = '0';
        style.pointerEvents = 'none';
        if (width > 0) style.width = width + 'px';
        style.height = shown.iframe.style.height;
      } else {
        iframe.setAttribute('loading', 'lazy');
        style.height = (auto ? 150 : fixed) + 'px';
      }
      return { iframe: iframe, url: url, app: null, timer: 0 };
    };
    const fail = (code, height) => {
      const detail = { code: code, message: messageOf(code) };
      if (height !== undefined) detail.height = height;
      call(settings.onError, detail);
    };
    const end = (type) => {
      if (type === 'revoked') {
        revoked = true;
        stopRenewal();
      }
      if (over) return;
      over = true;
      call(type === 'expired' ? settings.onExpired : settings.onRevoked);
    };
    const show = (url) => {
      shown = frameFor(url, false);
      element.appendChild(shown.iframe);
      // A lazy frame loads once it nears the viewport: its time to say something counts from when it shows.
      const start = () => {
        if (destroyed || heard) return;
        shown.timer = setTimeout(() => {
          if (!heard) fail('ready_timeout');
        }, timeout);
      };
      if (typeof window.IntersectionObserver !== 'function') return start();
      observer = new window.IntersectionObserver((entries) => {
        if (!entries.some((entry) => entry.isIntersecting)) return;
        observer.disconnect();
        observer = null;
        start();
      });
      observer.observe(shown.iframe);
    };
    const stopRenewal = () => {
      round += 1;
      renewing = false;
      stopLead();
      clearTimeout(retry);
      if (next) {
        clearTimeout(next.timer);
        next.iframe.remove();
        next = null;
      }
    };
    const failed = (reason, key, value) => {
      if (next) {
        clearTimeout(next.timer);
        next.iframe.remove();
        next = null;
      }
      // A shared link that did not show is not offered again: the next attempt asks fetchEmbedUrl.
      if (value !== undefined && renewed.get(key) === value) renewed.delete(key);
      attempts += 1;
      if (attempts <= RETRY_DELAYS.length) {
        retry = setTimeout(attempt, RETRY_DELAYS[attempts - 1]);
        return;
      }
      renewing = false;
      gaveUp = true;
      call(settings.onError, { code: 'renewal_failed', message: MESSAGES.renewal_failed + ' Last: ' + reason });
      if (expired) end('expired');
    };
    const attempt = () => {
      const current = ++round;
      const key = session || (shown ? shown.url.href : null);
      // The first link of a mount with fetchEmbedUrl alone is asked for only if the mount is still there
      // when the ask runs: a React StrictMode mount, unmount and mount again asks once.
      const asked =
        key === null
          ? ask(() => {
              if (current !== round) throw new Error('the mount was destroyed');
              return fetchEmbedUrl();
            }, timeout)
          : obtain(key, fetchEmbedUrl, timeout);
      asked.then(
        (value) => {
          if (current !== round) return;
          let url;
          try {
            url = httpUrl(value);
          } catch (error) {
            return failed(error.message, key, value);
          }
          if (!shown) {
            renewing = false;
            return show(url);
          }
          next = frameFor(url, true);
          next.key = key;
          next.value = value;
          const parent = shown.iframe.parentNode;
          if (parent) parent.insertBefore(next.iframe, shown.iframe);
          else element.appendChild(next.iframe);
          next.timer = setTimeout(() => failed('ready_timeout', key, value), timeout);
        },
        (error) => {
          if (current === round) failed(String((error && error.message) || error), key);
        },
      );
    };
    const startRenewal = () => {
      if (!canRenew() || renewing) return;
      renewing = true;
      attempts = 0;
      stopLead();
      attempt();
    };
    // Renews when a third of the time left remains, at most a minute before the end: time enough for the
    // new link to load (through a board application's hand-off too) while the shown one still works.
    const lead = (ms) => {
      stopLead();
      if (!canRenew() || renewing || typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return;
      stopLead = after(ms - Math.min(60000, ms / 3), startRenewal);
    };
    const idsOf = (data) => {
      const ids = {};
      if (typeof data.sessionId === 'string') ids.sessionId = data.sessionId;
      if (typeof data.boardId === 'string') ids.boardId = data.boardId;
      return ids;
    };
    const ready = (data, height, changed) => {
      session = typeof data.sessionId === 'string' ? data.sessionId : session;
      lead(data.expiresInMs);
      if (!said) {
        said = true;
        call(settings.onReady, Object.assign(idsOf(data), { height: height }));
      } else if (changed && height !== undefined) call(settings.onResize, height);
    };
    // The renewed frame: its ready puts it in the shown one's place, in one go, so no blank frame shows.
    const fromNext = (data, height) => {
      if (data.type === 'ready') {
        const old = shown;
        shown = next;
        next = null;
        clearTimeout(shown.timer);
        const style = shown.iframe.style;
        const before = style.height;
        style.position = '';
        style.opacity = '';
        style.pointerEvents = '';
        style.width = '100%';
        if (auto && height !== undefined) style.height = height + 'px';
        shown.iframe.removeAttribute('aria-hidden');
        shown.iframe.removeAttribute('inert');
        clearTimeout(old.timer);
        old.iframe.remove();
        heard = true;
        renewing = false;
        expired = false;
        attempts = 0;
        session = null;
        ready(data, height, style.height !== before);
      } else if (data.type === 'error') {
        failed(typeof data.code === 'string' ? data.code : 'internal', next.key, next.value);
      } else if (data.type === 'expired' || data.type === 'revoked') {
        failed(data.type, next.key, next.value);
      }
    };
    const onMessage = (event) => {
      // Only our own frames, and only from the embed page's origin or the app it handed over to.
      const source = event.source;
      const frame = !source
        ? null
        : shown && source === shown.iframe.contentWindow
          ? shown
          : next && source === next.iframe.contentWindow
            ? next
            : null;
      if (!frame) return;
      const fromEmbed = event.origin === frame.url.origin;
      if (!fromEmbed && (frame.app === null || event.origin !== frame.app)) return;
      const data = event.data;
      if (!data || typeof data !== 'object' || data.source !== SOURCE) return;
      if (data.type === 'handoff') {
        if (fromEmbed && typeof data.origin === 'string') frame.app = originOf(data.origin);
        return;
      }
      const height = pixels(data.height);
      if (frame === next) return fromNext(data, height);
      if (data.type !== 'resize') {
        heard = true;
        clearTimeout(shown.timer);
      }
      if (auto && height !== undefined) shown.iframe.style.height = height + 'px';
      if (data.type === 'ready') {
        ready(data, height, true);
      } else if (data.type === 'resize') {
        if (height !== undefined) call(settings.onResize, height);
      } else if (data.type === 'revoked') {
        end('revoked');
      } else if (data.type === 'expired') {
        expired = true;
        if (canRenew()) startRenewal();
        else end('expired');
      } else if (data.type === 'error') {
        const code = typeof data.code === 'string' ? data.code : 'internal';
        // A link expired at load is renewed like one that expires while shown.
        if (code === 'session_expired' && canRenew()) startRenewal();
        else fail(code, height);
      }
    };
    const holder = (key) => {
      if (key === session && shown) startRenewal();
    };
    window.addEventListener('message', onMessage);
    if (typeof fetchEmbedUrl === 'function') {
      if (typeof window.BroadcastChannel === 'function') openChannel();
      holders.add(holder);
    }
    if (first) show(first);
    else startRenewal();
    const handle = {
      destroy: () => {
        if (destroyed) return;
        destroyed = true;
        stopRenewal();
        holders.delete(holder);
        window.removeEventListener('message', onMessage);
        if (observer) observer.disconnect();
        if (shown) {
          clearTimeout(shown.timer);
          shown.iframe.remove();
        }
      },
    };
    Object.defineProperty(handle, 'iframe', { enumerable: true, get: () => (shown ? shown.iframe : null) });
    return handle;
  };
  return Object.freeze({ mount: mount });
}`;

/**
 * `GET /embed.js`: the script host pages load to embed a board. It defines `window.EmbedSession`, the
 * object `HOST_CORE` returns, once. Served exactly as written here: the bytes are what the quickstart's
 * Subresource Integrity hash pins, so they never go through a bundler.
 */
export const HOST_SCRIPT = `/*! embed-session host script: EmbedSession.mount(target, options). See docs/embedding.md. */
(() => {
  'use strict';
  if (window.EmbedSession) return;
  window.EmbedSession = (${HOST_CORE})(window);
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
