import type { APIGatewayProxyResult } from 'aws-lambda';
import { MESSAGE_SOURCE } from './frame-script';

/**
 * `GET /embed-board.js`: the script a board's own application loads once the embed page handed the user
 * to it. `EmbedBoard.ready({sessionId, boardId})` tells the host page the board is shown and from then on
 * reports the page's height as it changes (`resize`); `EmbedBoard.expired()` and `EmbedBoard.revoked()`
 * say the session ended. The envelope is the built-in page's, so the host script treats both alike; it
 * accepts these only from the origin the embed page announced, in that frame. Dependency-free ES2020.
 */
export const BOARD_SCRIPT = `/*! embed-session board script: EmbedBoard.ready(ids). See docs/board-apps.md. */
(() => {
  'use strict';
  if (window.EmbedBoard) return;
  const framed = window.parent !== window;
  let ids = {};
  let reported = -1;
  let observer = null;
  const post = (type, extra) => {
    if (framed) window.parent.postMessage(Object.assign({ source: '${MESSAGE_SOURCE}', type: type }, ids, extra), '*');
  };
  const measure = () => Math.ceil(document.body.getBoundingClientRect().height);
  const ready = (options) => {
    const given = options || {};
    ids = {};
    if (typeof given.sessionId === 'string') ids.sessionId = given.sessionId;
    if (typeof given.boardId === 'string') ids.boardId = given.boardId;
    reported = measure();
    post('ready', { height: reported });
    if (observer === null && typeof ResizeObserver === 'function') {
      observer = new ResizeObserver(() => {
        const height = measure();
        if (height === reported) return;
        reported = height;
        post('resize', { height: height });
      });
      observer.observe(document.body);
    }
  };
  window.EmbedBoard = Object.freeze({
    ready: ready,
    expired: () => post('expired', {}),
    revoked: () => post('revoked', {}),
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
