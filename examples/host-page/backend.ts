/**
 * The backend of the example host page: the few lines a SaaS backend adds to embed a board.
 *
 * - `GET /` is the page with the board. For the signed-in user, it creates an embed session with the API
 *   key (which stays on this server), then renders the page with the session's `embedUrl` in it.
 * - `POST /embed-url` is what the page's host script asks (its `fetchEmbedUrl`) before the session ends,
 *   to renew it without interrupting the user: a new session, answered as `{"embedUrl": …}`.
 *
 * One session per page view, as docs/embedding.md advises: an embed URL is a credential, so none is
 * stored, logged or cached. The signed-in user is fixed here; your product takes it from its own login.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml, pageHeaders, renderPage } from './page';

/** Your product's signed-in user, as the session names them. */
export interface SignedInUser {
  userId: string;
  email: string;
  firstName: string;
  lastName: string;
}

export interface HostPageConfig {
  /** The service's base URL (the stage's `ApiUrl`), without a trailing slash. */
  apiBaseUrl: string;
  /** The API key: sent to the service only, never to a browser, never logged. */
  apiKey: string;
  /** The board the page embeds. */
  boardId: string;
  user: SignedInUser;
  /** How long a session lasts (one page view; the page's host script renews it before it ends). */
  sessionSeconds?: number;
  /** How long the service may take to answer, in milliseconds. */
  timeoutMs?: number;
  /** Where a line per session (or per refusal) goes: never a URL or a key. */
  log?: (line: string) => void;
}

const SESSION_SECONDS = 3600;
const TIMEOUT_MS = 10_000;

/** The service did not give a usable session; `reason` is for the developer's console, not the page. */
export class SessionUnavailable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Creates a session for the signed-in user on the board, with the API key; returns its embedUrl. */
export async function createEmbedUrl(
  config: HostPageConfig,
): Promise<{ sessionId: string; embedUrl: string }> {
  let response: Response;
  try {
    response = await fetch(`${config.apiBaseUrl}/api/embed/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${config.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        boardId: config.boardId,
        ...config.user,
        expiresInSeconds: config.sessionSeconds ?? SESSION_SECONDS,
      }),
      signal: AbortSignal.timeout(config.timeoutMs ?? TIMEOUT_MS),
    });
  } catch (error) {
    throw new SessionUnavailable(`${config.apiBaseUrl} cannot be reached (${(error as Error).message})`);
  }
  const body = (await response.json().catch(() => ({}))) as {
    embedUrl?: unknown;
    session?: { id?: unknown };
    message?: unknown;
  };
  if (response.status !== 201) {
    throw new SessionUnavailable(
      `the service refused the session: ${response.status} ${String(body.message)}`,
    );
  }
  // Only an http(s) link goes into the page: never a `javascript:` or `data:` URL, whoever answered.
  const embedUrl = typeof body.embedUrl === 'string' ? body.embedUrl : '';
  if (!URL.canParse(embedUrl) || !['http:', 'https:'].includes(new URL(embedUrl).protocol)) {
    throw new SessionUnavailable('the service answered without an http(s) embedUrl');
  }
  return { sessionId: String(body.session?.id), embedUrl };
}

/** The answer when no session could be made: one plain sentence for the user (the reason is logged). */
const UNAVAILABLE = 'The board cannot be shown right now. Reload the page to try again.';

export function hostPageHandler(config: HostPageConfig): (req: IncomingMessage, res: ServerResponse) => void {
  const log = config.log ?? console.log;
  const session = async (): Promise<string | undefined> => {
    try {
      const { sessionId, embedUrl } = await createEmbedUrl(config);
      log(`session ${sessionId} for ${config.user.userId} on board ${config.boardId}`);
      return embedUrl;
    } catch (error) {
      if (!(error instanceof SessionUnavailable)) throw error;
      log(`no session for ${config.user.userId}: ${error.reason}`);
      return undefined;
    }
  };

  const page = async (res: ServerResponse) => {
    const embedUrl = await session();
    const headers = pageHeaders(config.apiBaseUrl);
    if (embedUrl === undefined) {
      res
        .writeHead(502, headers)
        .end(`<!doctype html><title>Your product</title><p>${escapeHtml(UNAVAILABLE)}</p>`);
      return;
    }
    const { firstName, lastName } = config.user;
    res.writeHead(200, headers).end(
      renderPage({
        apiBaseUrl: config.apiBaseUrl,
        embedUrl,
        userName: `${firstName} ${lastName}`,
        boardId: config.boardId,
      }),
    );
  };

  const renewal = async (req: IncomingMessage, res: ServerResponse) => {
    const json = (status: number, body: object) =>
      res
        .writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
        .end(JSON.stringify(body));
    // Only this site's own page may ask: a page of another site cannot read the answer anyway (no CORS),
    // and this keeps it from creating sessions in the user's name.
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') return json(403, { error: 'Only this site may ask.' });
    const embedUrl = await session();
    if (embedUrl === undefined) return json(502, { error: UNAVAILABLE });
    json(200, { embedUrl });
  };

  type Route = { method: string; run: (req: IncomingMessage, res: ServerResponse) => Promise<unknown> };
  const routes: Record<string, Route> = {
    '/': { method: 'GET', run: (_req, res) => page(res) },
    '/embed-url': { method: 'POST', run: renewal },
  };
  return (req, res) => {
    const route = routes[new URL(req.url ?? '/', 'http://host').pathname];
    if (!route) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
    if (req.method !== route.method) {
      res.writeHead(405, { Allow: route.method, 'Content-Type': 'text/plain' }).end('Method not allowed');
      return;
    }
    route.run(req, res).catch((error: Error) => {
      log(`the host page failed: ${error.message}`);
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(UNAVAILABLE);
    });
  };
}
