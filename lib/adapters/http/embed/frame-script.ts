import { createHash } from 'node:crypto';

/** The `source` of every message the embed page posts to its parent, so hosts can tell ours apart. */
export const MESSAGE_SOURCE = 'embed-session';

/**
 * The embed page's only script, inline and allowed by its hash in the CSP (no other script can run). It
 * tells the framing page what happens, with `postMessage`:
 *
 * - `ready` once the board is rendered, `error` (with a `code`) on an error page, each with `height`, the
 *   content's height in CSS pixels; then `resize` whenever that height changes. `ready` carries
 *   `expiresInMs`, the time the session has left, for the host script to renew it before the end;
 * - `expired` when the session's expiry passes while the page is open (the page then shows the expired
 *   view without a reload), or on the expired error page; `revoked` on the revoked error page;
 * - on the view after an end (`GET /embed/ended`), `expired` or `revoked` as it shows, with its height.
 *
 * It also swaps a failed avatar image for the initials under it (the CSP allows no inline handler).
 *
 * Messages carry `sessionId` and `boardId` at most, never the token, the e-mail or metadata: the page
 * cannot know its parent's origin (it sends no referrer and reads none), so it posts to any (`*`).
 * The expiry is counted from the server's own `data-expires-in-ms`, so a wrong clock in the browser
 * neither ends the session early nor keeps it open. Plain ES2020, no build step: these bytes are hashed.
 */
export const FRAME_SCRIPT = `(() => {
  'use strict';
  const doc = document;
  const body = doc.body;
  const root = doc.getElementById('embed-root');
  if (!root) return;
  const framed = window.parent !== window;
  let ids = {};
  const island = doc.getElementById('embed-context');
  if (island) {
    try {
      const context = JSON.parse(island.textContent || '{}');
      ids = { sessionId: String(context.session.id), boardId: String(context.board.id) };
    } catch (_) {
      ids = {};
    }
  }
  const post = (type, extra) => {
    if (framed) window.parent.postMessage(Object.assign({ source: '${MESSAGE_SOURCE}', type: type }, ids, extra), '*');
  };
  const measure = () => Math.ceil(root.getBoundingClientRect().height);
  let reported = -1;
  // The expiry in the viewer's own time zone and the page's language (the server can only say UTC).
  for (const time of doc.querySelectorAll('time[data-local]')) {
    const at = new Date(time.getAttribute('datetime') || '');
    if (!Number.isNaN(at.getTime())) {
      time.textContent = at.toLocaleString(doc.documentElement.lang || 'en', { dateStyle: 'medium', timeStyle: 'short' });
    }
  }
  // A failed avatar gives way to the initials under it, rather than a broken-image icon. An image that
  // failed before this script ran is complete with no width; one still loading reports its error.
  for (const image of doc.querySelectorAll('img.avatar-image')) {
    if (image.complete && image.naturalWidth === 0) image.remove();
    else image.addEventListener('error', () => image.remove());
  }
  const expire = () => {
    const view = doc.getElementById('embed-expired');
    if (view) {
      root.replaceChildren(view.content.cloneNode(true));
      root.classList.add('notice-page');
    }
    body.setAttribute('data-embed-state', 'expired');
    post('expired', {});
  };
  const watchExpiry = (ms) => {
    const deadline = Date.now() + ms;
    let timer = 0;
    let done = false;
    const check = () => {
      if (done) return;
      clearTimeout(timer);
      const left = deadline - Date.now();
      if (left <= 0) {
        done = true;
        expire();
        return;
      }
      // Short steps, so a throttled background tab or a sleeping laptop notices soon after waking.
      timer = setTimeout(check, Math.min(left, 60000));
    };
    doc.addEventListener('visibilitychange', check);
    check();
  };
  reported = measure();
  const state = body.getAttribute('data-embed-state');
  if (state === 'ready') {
    const remaining = body.getAttribute('data-expires-in-ms');
    const ms = remaining ? Number(remaining) : Number.NaN;
    const known = Number.isFinite(ms) && ms >= 0;
    // The time left, as the server counted it: the host script renews the session from it, never from
    // the host page's clock.
    post('ready', known ? { height: reported, expiresInMs: ms } : { height: reported });
    if (known) watchExpiry(ms);
  } else if (state === 'ended') {
    // The view a board application sent its frame to: the host hears the end as from the built-in page.
    const reason = body.getAttribute('data-embed-reason');
    post(reason === 'expired' || reason === 'revoked' ? reason : 'resize', { height: reported });
  } else {
    const code = body.getAttribute('data-embed-code') || 'internal';
    post('error', { code: code, height: reported });
    if (code === 'session_expired') post('expired', {});
    if (code === 'session_revoked') post('revoked', {});
  }
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => {
      const height = measure();
      if (height === reported) return;
      reported = height;
      post('resize', { height: height });
    }).observe(root);
  }
})();`;

/** CSP source allowing exactly FRAME_SCRIPT. */
export const FRAME_SCRIPT_HASH = `'sha256-${createHash('sha256').update(FRAME_SCRIPT).digest('base64')}'`;
