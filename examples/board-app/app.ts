/**
 * The reference board application: what the team that owns a board's front end runs behind `appUrl`.
 *
 * - `POST /handoff` receives the embed page's form (`id_token`, and `theme`, `locale` when the host gave
 *   them), verifies the token (`verify.ts`), starts a session of its own in a cookie and answers `303` to
 *   `GET /board`, so no token is ever in a URL and a reload posts nothing again.
 * - `GET /board` draws the board as the signed-in user and loads the service's `/embed-board.js`, so the
 *   host page hears `ready` and `resize` from this frame.
 * - `POST /vote` toggles the user's vote on a post (in memory).
 * - `POST /backchannel-logout` ends, at once, every session of the embed session a logout token names
 *   (OpenID Connect Back-Channel Logout 1.0).
 *
 * Plain `node:http`; `jose` is its only dependency.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type BoardView,
  boardPage,
  demoPosts,
  type Locale,
  type Post,
  parseLocale,
  parseTheme,
  refusedPage,
  type Theme,
} from './pages';
import { type BoardUser, type Refusal, TokenRefused, TokenVerifier } from './verify';

/**
 * The session cookie. `__Host-` binds it to this host (so `Secure`, `Path=/` and no `Domain`); `SameSite=None`
 * because the board is always in a frame of another site; `Partitioned` (CHIPS) keeps it in the framing
 * site's partition, so it works where third-party cookies are blocked and is never sent when the board is
 * framed by any other site. Browsers accept `Secure` cookies from `http://localhost` and `http://127.0.0.1`
 * (both are secure contexts), so the same cookie works on a developer's machine.
 */
export const SESSION_COOKIE = '__Host-board-session';
/** How long this application's own session lasts; a back-channel logout ends it sooner. */
export const SESSION_SECONDS = 8 * 60 * 60;
/** The largest form this application reads (an ID token is a few kilobytes). */
const MAX_BODY_BYTES = 64 * 1024;

export interface BoardAppOptions {
  /** The embed session service's public base URL: the tokens' `iss`, and where `/embed-board.js` is. */
  issuer: string;
  /** This application's own origin (`https://board.example.com`): the tokens' `aud`. */
  origin: string;
  /** Who may frame the board (`frame-ancestors`); `*` by default, as the cookie is partitioned anyway. */
  frameAncestors?: string;
  /** The time, for tests. */
  now?: () => Date;
}

interface Session {
  user: BoardUser;
  locale: Locale;
  theme: Theme;
  csrf: string;
  /** Milliseconds. */
  expiresAt: number;
}

export interface BoardApp {
  handle(req: IncomingMessage, res: ServerResponse): void;
}

export function createBoardApp(options: BoardAppOptions): BoardApp {
  const issuer = options.issuer.replace(/\/+$/, '');
  const now = options.now ?? (() => new Date());
  const verifier = new TokenVerifier({ issuer, audience: options.origin, now });
  const frameAncestors = options.frameAncestors ?? '*';
  /** Cookie value → session. */
  const sessions = new Map<string, Session>();
  /** Cookie values of sessions a back-channel logout ended → until when to say so (ms). */
  const ended = new Map<string, number>();
  /** Board id → its posts. */
  const boards = new Map<string, Post[]>();

  const postsOf = (boardId: string): Post[] => {
    const posts = boards.get(boardId) ?? demoPosts();
    boards.set(boardId, posts);
    return posts;
  };

  const forgetExpired = () => {
    const t = now().getTime();
    for (const [id, session] of sessions) if (session.expiresAt <= t) sessions.delete(id);
    for (const [id, until] of ended) if (until <= t) ended.delete(id);
  };

  /** Headers of every page: never cached, never leaking the URL, scripts and styles by nonce only. */
  const pageHeaders = (nonce: string): Record<string, string> => ({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': [
      "default-src 'none'",
      `script-src 'nonce-${nonce}' ${new URL(issuer).origin}`,
      `style-src 'nonce-${nonce}'`,
      'img-src https: http: data:',
      "form-action 'self'",
      "base-uri 'none'",
      `frame-ancestors ${frameAncestors}`,
    ].join('; '),
  });

  const refuse = (
    res: ServerResponse,
    status: number,
    reason: Refusal | 'no-session' | 'ended',
    look: { locale: Locale; theme: Theme },
  ) => {
    const nonce = randomBytes(16).toString('base64');
    res
      .writeHead(status, pageHeaders(nonce))
      .end(refusedPage(reason, { ...look, nonce, serviceUrl: issuer }));
  };

  const sessionOf = (req: IncomingMessage): { id?: string; session?: Session } => {
    const id = cookieValue(req, SESSION_COOKIE);
    return { id, session: id === undefined ? undefined : sessions.get(id) };
  };

  async function handOff(req: IncomingMessage, res: ServerResponse) {
    const form = await readForm(req);
    const look = { locale: parseLocale(form?.get('locale')), theme: parseTheme(form?.get('theme')) };
    const idToken = form?.get('id_token');
    if (!idToken) return refuse(res, 400, 'invalid', look);
    let user: BoardUser;
    try {
      user = await verifier.verifyHandOff(idToken);
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      return refuse(res, error.reason === 'unavailable' ? 503 : 401, error.reason, look);
    }
    forgetExpired();
    const id = randomBytes(32).toString('base64url');
    sessions.set(id, {
      user,
      ...look,
      csrf: randomBytes(32).toString('base64url'),
      expiresAt: now().getTime() + SESSION_SECONDS * 1000,
    });
    res
      .writeHead(303, {
        Location: '/board',
        'Set-Cookie': `${SESSION_COOKIE}=${id}; Path=/; Max-Age=${SESSION_SECONDS}; Secure; HttpOnly; SameSite=None; Partitioned`,
        'Cache-Control': 'no-store',
        'Referrer-Policy': 'no-referrer',
      })
      .end();
  }

  function board(req: IncomingMessage, res: ServerResponse) {
    forgetExpired();
    const { id, session } = sessionOf(req);
    const look = { locale: parseLocale(undefined), theme: parseTheme(undefined) };
    if (!session) return refuse(res, 401, id !== undefined && ended.has(id) ? 'ended' : 'no-session', look);
    const nonce = randomBytes(16).toString('base64');
    const { user } = session;
    const view: BoardView = {
      boardId: user.board_id,
      boardName: user.board_name ?? user.board_id,
      sid: user.sid,
      sub: user.sub,
      userName: [user.given_name, user.family_name].filter(Boolean).join(' ') || user.email,
      picture: user.picture,
      posts: postsOf(user.board_id),
      csrf: session.csrf,
      locale: session.locale,
      theme: session.theme,
      serviceUrl: issuer,
      nonce,
    };
    res.writeHead(200, pageHeaders(nonce)).end(boardPage(view));
  }

  async function vote(req: IncomingMessage, res: ServerResponse) {
    const { session } = sessionOf(req);
    const form = await readForm(req);
    if (!session || !form || form.get('csrf') !== session.csrf)
      return refuse(res, 403, 'no-session', {
        locale: session?.locale ?? 'en',
        theme: session?.theme ?? 'auto',
      });
    const post = postsOf(session.user.board_id).find((p) => p.id === form.get('post'));
    if (post) {
      if (post.voters.has(session.user.sub)) post.voters.delete(session.user.sub);
      else post.voters.add(session.user.sub);
    }
    res.writeHead(303, { Location: '/board', 'Cache-Control': 'no-store' }).end();
  }

  async function backChannelLogout(req: IncomingMessage, res: ServerResponse) {
    const headers = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };
    const token = (await readForm(req))?.get('logout_token');
    let sid: string;
    try {
      if (!token) throw new TokenRefused('invalid', 'no logout_token');
      sid = await verifier.verifyLogout(token);
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      const status = error.reason === 'unavailable' ? 503 : 400;
      return res
        .writeHead(status, headers)
        .end(JSON.stringify({ error: 'invalid_request', error_description: 'the logout token was refused' }));
    }
    for (const [id, session] of sessions) {
      if (session.user.sid !== sid) continue;
      sessions.delete(id);
      ended.set(id, session.expiresAt);
    }
    forgetExpired();
    res.writeHead(200, { 'Cache-Control': 'no-store' }).end();
  }

  return {
    handle(req, res) {
      const path = new URL(req.url ?? '/', 'http://app').pathname;
      const route =
        req.method === 'POST' && path === '/handoff'
          ? handOff
          : req.method === 'GET' && path === '/board'
            ? board
            : req.method === 'POST' && path === '/vote'
              ? vote
              : req.method === 'POST' && path === '/backchannel-logout'
                ? backChannelLogout
                : undefined;
      if (!route) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found\n');
        return;
      }
      Promise.resolve(route(req, res)).catch(() => {
        // Never a stack trace, never the token: a plain answer, and the details stay out of the page.
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Something went wrong.\n');
      });
    },
  };
}

/** The body of a form POST, or undefined when it is not one or too large. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** A cookie's value from the request (the first of that name). */
function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
