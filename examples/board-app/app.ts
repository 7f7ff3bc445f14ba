/**
 * The reference board application: what the team that owns a board's front end runs behind `appUrl`.
 *
 * - `POST /handoff` receives the embed page's form (`id_token`, and `theme`, `locale` when the host gave
 *   them), verifies the token (`verify.ts`), starts a session of its own in a cookie, bounded by the embed
 *   session's own expiry (`session_exp`), and answers `303` to `GET /board`, so no token is ever in a URL
 *   and a reload posts nothing again.
 * - `GET /board` draws the board as the signed-in user and loads the service's `/embed-board.js`, giving
 *   it the time the session has left, its language and theme, and `GET /session` to watch, so the host
 *   page hears `ready`, `resize` and the session's end from this frame.
 * - `POST /vote` toggles the user's vote on a post (in memory).
 * - `GET /session` says whether the session still lives: what `/embed-board.js` watches.
 * - `POST /backchannel-logout` ends, at once, every session a logout token names: by `sid`, or every
 *   session of its user (`sub`, and `tid`) when it has none (OpenID Connect Back-Channel Logout 1.0).
 *
 * A request whose session ended, or that has none, gets no board: it is sent to the service's view of the
 * end (`{issuer}/embed/ended`), in the session's language and theme.
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
  type RefusedReason,
  refusedPage,
  type Theme,
} from './pages';
import { type BoardUser, type LoggedOut, TokenRefused, TokenVerifier } from './verify';

/**
 * The session cookie. `__Host-` binds it to this host (so `Secure`, `Path=/` and no `Domain`); `SameSite=None`
 * because the board is always in a frame of another site; `Partitioned` (CHIPS) keeps it in the framing
 * site's partition, so it works where third-party cookies are blocked and is never sent when the board is
 * framed by any other site. Browsers accept `Secure` cookies from `http://localhost` and `http://127.0.0.1`
 * (both are secure contexts), so the same cookie works on a developer's machine.
 */
export const SESSION_COOKIE = '__Host-board-session';
/**
 * The session's language and theme (`de.dark`), nothing secret, kept longer than the session: a request
 * whose session this application no longer knows (a restart forgot it) still ends in the user's language.
 */
export const LOOK_COOKIE = '__Host-board-look';
const LOOK_COOKIE_SECONDS = 400 * 24 * 60 * 60;
/**
 * The longest this application's own session lasts; it ends sooner with the embed session (`session_exp`)
 * or a back-channel logout. Its cookie, and the memory of how it ended, last this long.
 */
export const SESSION_SECONDS = 8 * 60 * 60;
/** The largest form this application reads (an ID token is a few kilobytes). */
const MAX_BODY_BYTES = 64 * 1024;
/** The application's own URL that `/embed-board.js` watches. */
export const WATCH_PATH = '/session';

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

/** How a session ended, as the service's ended view says it. */
type EndReason = 'expired' | 'revoked';

interface Session {
  user: BoardUser;
  locale: Locale;
  theme: Theme;
  csrf: string;
  /**
   * When it ends (ms, this application's clock): at most SESSION_SECONDS, and never after the embed
   * session, counted as `session_exp − iat` seconds (both on the service's clock) from the hand-off.
   */
  expiresAt: number;
  /** Set when a back-channel logout ended it before then. */
  loggedOut?: true;
  /** Until when this record is kept (ms), so a later request still learns how the session ended. */
  keepUntil: number;
}

export interface BoardApp {
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * Who a user is: the (`tid`, `sub`) pair, so the same `sub` of two tenants is two users. A token without
 * `tid` (a service that does not name tenants) keys by `sub` alone.
 */
export function userKey(user: Pick<BoardUser, 'sub' | 'tid'>): string {
  return JSON.stringify([user.tid ?? null, user.sub]);
}

export function createBoardApp(options: BoardAppOptions): BoardApp {
  const issuer = options.issuer.replace(/\/+$/, '');
  const now = options.now ?? (() => new Date());
  const verifier = new TokenVerifier({ issuer, audience: options.origin, now });
  const frameAncestors = options.frameAncestors ?? '*';
  /** Cookie value → session (ended ones too, until `keepUntil`). */
  const sessions = new Map<string, Session>();
  /** Board id → its posts. */
  const boards = new Map<string, Post[]>();

  const postsOf = (boardId: string): Post[] => {
    const posts = boards.get(boardId) ?? demoPosts();
    boards.set(boardId, posts);
    return posts;
  };

  const forgetOld = () => {
    const t = now().getTime();
    for (const [id, session] of sessions) if (session.keepUntil <= t) sessions.delete(id);
  };

  /** Why a session shows no board any more, or undefined while it lives. */
  const endOf = (session: Session): EndReason | undefined =>
    now().getTime() >= session.expiresAt ? 'expired' : session.loggedOut ? 'revoked' : undefined;

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
      // The board script watches this application's session (GET /session).
      "connect-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      `frame-ancestors ${frameAncestors}`,
    ].join('; '),
  });

  const refuse = (
    res: ServerResponse,
    status: number,
    reason: RefusedReason,
    look: { locale: Locale; theme: Theme },
  ) => {
    const nonce = randomBytes(16).toString('base64');
    res
      .writeHead(status, pageHeaders(nonce))
      .end(refusedPage(reason, { ...look, nonce, serviceUrl: issuer }));
  };

  /** The session's language and theme, or those of the look cookie, or the defaults. */
  const lookOf = (req: IncomingMessage, session: Session | undefined) => {
    if (session) return { locale: session.locale, theme: session.theme };
    const [locale, theme] = (cookieValue(req, LOOK_COOKIE) ?? '').split('.');
    return { locale: parseLocale(locale), theme: parseTheme(theme) };
  };

  /**
   * No board for this request: the frame goes to the service's view of the end, in the session's
   * language and theme (the neutral view when there is no session to tell of).
   */
  const toEndedView = (req: IncomingMessage, res: ServerResponse, session: Session | undefined) => {
    const url = new URL(`${issuer}/embed/ended`);
    const reason = session ? endOf(session) : undefined;
    if (reason) url.searchParams.set('reason', reason);
    const look = lookOf(req, session);
    url.searchParams.set('locale', look.locale);
    url.searchParams.set('theme', look.theme);
    res
      .writeHead(303, { Location: url.href, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' })
      .end();
  };

  /** The request's session: `live` while it may be shown, `known` whether it ended or not. */
  const sessionOf = (req: IncomingMessage): { known?: Session; live?: Session } => {
    forgetOld();
    const id = cookieValue(req, SESSION_COOKIE);
    const known = id === undefined ? undefined : sessions.get(id);
    return { known, live: known && endOf(known) === undefined ? known : undefined };
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
    forgetOld();
    const t = now().getTime();
    // The embed session's time left, from two instants of the service's clock: this application's clock
    // counts only the time since the token arrived, so its offset from the service's does not matter.
    const left = Math.min(SESSION_SECONDS, Math.max(0, user.session_exp - user.iat));
    const id = randomBytes(32).toString('base64url');
    sessions.set(id, {
      user,
      ...look,
      csrf: randomBytes(32).toString('base64url'),
      expiresAt: t + left * 1000,
      keepUntil: t + SESSION_SECONDS * 1000,
    });
    const attributes = 'Path=/; Secure; HttpOnly; SameSite=None; Partitioned';
    res
      .writeHead(303, {
        Location: '/board',
        'Set-Cookie': [
          `${SESSION_COOKIE}=${id}; Max-Age=${SESSION_SECONDS}; ${attributes}`,
          `${LOOK_COOKIE}=${look.locale}.${look.theme}; Max-Age=${LOOK_COOKIE_SECONDS}; ${attributes}`,
        ],
        'Cache-Control': 'no-store',
        'Referrer-Policy': 'no-referrer',
      })
      .end();
  }

  function board(req: IncomingMessage, res: ServerResponse) {
    const { known, live } = sessionOf(req);
    if (!live) return toEndedView(req, res, known);
    const nonce = randomBytes(16).toString('base64');
    const { user } = live;
    const view: BoardView = {
      boardId: user.board_id,
      boardName: user.board_name ?? user.board_id,
      sid: user.sid,
      voter: userKey(user),
      userName: [user.given_name, user.family_name].filter(Boolean).join(' ') || user.email,
      picture: user.picture,
      posts: postsOf(user.board_id),
      csrf: live.csrf,
      locale: live.locale,
      theme: live.theme,
      expiresIn: (live.expiresAt - now().getTime()) / 1000,
      watch: WATCH_PATH,
      serviceUrl: issuer,
      nonce,
    };
    res.writeHead(200, pageHeaders(nonce)).end(boardPage(view));
  }

  async function vote(req: IncomingMessage, res: ServerResponse) {
    const form = await readForm(req);
    const { known, live } = sessionOf(req);
    if (!live) return toEndedView(req, res, known);
    if (!form || form.get('csrf') !== live.csrf)
      return refuse(res, 403, 'forbidden', { locale: live.locale, theme: live.theme });
    const voter = userKey(live.user);
    const post = postsOf(live.user.board_id).find((p) => p.id === form.get('post'));
    if (post) {
      if (post.voters.has(voter)) post.voters.delete(voter);
      else post.voters.add(voter);
    }
    res.writeHead(303, { Location: '/board', 'Cache-Control': 'no-store' }).end();
  }

  /** `{"active": true}` while the session may be shown; `{"active": false, "reason"}` once it ended. */
  function watch(req: IncomingMessage, res: ServerResponse) {
    const { known, live } = sessionOf(req);
    const reason = known ? endOf(known) : undefined;
    const state = live ? { active: true } : reason ? { active: false, reason } : { active: false };
    res
      .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
      .end(JSON.stringify(state));
  }

  async function backChannelLogout(req: IncomingMessage, res: ServerResponse) {
    const headers = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };
    const token = (await readForm(req))?.get('logout_token');
    let out: LoggedOut;
    try {
      if (!token) throw new TokenRefused('invalid', 'no logout_token');
      out = await verifier.verifyLogout(token);
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      const status = error.reason === 'unavailable' ? 503 : 400;
      return res
        .writeHead(status, headers)
        .end(JSON.stringify({ error: 'invalid_request', error_description: 'the logout token was refused' }));
    }
    forgetOld();
    for (const session of sessions.values()) {
      const { user } = session;
      const named =
        'sid' in out
          ? user.sid === out.sid
          : user.sub === out.sub && (out.tid === undefined || user.tid === out.tid);
      if (named) session.loggedOut = true;
    }
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
              : req.method === 'GET' && path === WATCH_PATH
                ? watch
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
