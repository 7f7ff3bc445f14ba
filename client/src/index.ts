/**
 * A typed client for the Embed Session API. No dependencies: it uses the platform's `fetch` (Node 18+,
 * browsers are not the place for API keys). Types come from the service's OpenAPI document
 * (`openapi.generated.ts`, generated from docs/openapi.json), never written twice.
 *
 * Retries are safe by construction: every create carries an `Idempotency-Key` (one is made when the
 * caller gives none), reads are reads, and revocations are idempotent. A create whose key an earlier
 * attempt still holds (`409`) is retried too, after its `Retry-After`: it then gets that attempt's answer.
 *
 * Errors come in two kinds: `EmbedSessionError` when the API answered (its status and `{error, message}`),
 * `EmbedSessionConnectionError` (or its `EmbedSessionTimeoutError`) when no answer came, with the
 * underlying failure as `cause`. A call cancelled through its `signal` rejects with the signal's reason.
 */
import type { components, operations } from './openapi.generated.js';

export type CreateSessionRequest = components['schemas']['CreateSessionRequest'];
export type CreateSessionResponse = components['schemas']['CreateSessionResponse'];
export type CreatedSession = components['schemas']['CreatedSession'];
export type Session = components['schemas']['Session'];
/** A session another tenant created on your organization's public board: its outline only. */
export type OtherTenantSession = components['schemas']['OtherTenantSession'];
export type ListSessionsQuery = NonNullable<operations['listSessions']['parameters']['query']>;
export type SessionPage = components['schemas']['SessionPage'];
export type RevokeUserSessionsRequest = components['schemas']['RevokeUserSessionsRequest'];
export type RevokedCount = components['schemas']['RevokedCount'];
export type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>;
export type SessionEvent = components['schemas']['SessionEvent'];
/** One revoke-all call, told once: its scope, cut-off and count (it names no session). */
export type SessionsRevokedEvent = components['schemas']['SessionsRevokedEvent'];
/** Any event a webhook delivers or the events API lists: discriminate on `type`. */
export type EmbedEvent = SessionEvent | SessionsRevokedEvent;
export type EventPage = components['schemas']['EventPage'];
export type CreateWebhookRequest = components['schemas']['CreateWebhookRequest'];
export type Webhook = components['schemas']['Webhook'];
export type ListWebhooksQuery = NonNullable<operations['listWebhooks']['parameters']['query']>;
/** A page of endpoints: follow `nextCursor` until it is `null`. */
export type WebhookList = components['schemas']['WebhookList'];
/** A new endpoint and its signing secret, which no other call shows. */
export type CreatedWebhook = components['schemas']['CreatedWebhook'];
export type ErrorBody = components['schemas']['Error'];

export interface ClientOptions {
  /** The API's base URL: the stage URL in AWS (the ApiUrl output), http://127.0.0.1:3000 locally. */
  baseUrl: string;
  /** An API key (`esk_…`). Keep it on the server. */
  apiKey: string;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /**
   * Retries after a 429, a 503, a network failure, or a 409 to a request with an Idempotency-Key (an
   * earlier attempt with that key is still in progress); default 2 (three attempts in all).
   */
  maxRetries?: number;
  /** Waits between retries; injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Milliseconds each attempt may take, from sending the request to reading the whole answer; an attempt
   * that takes longer is abandoned (and retried like a network failure). Default 30 000.
   */
  timeout?: number;
}

/** Options every method takes as its last argument. */
export interface CallOptions {
  /** This call's per-attempt timeout, in place of the client's. */
  timeout?: number;
  /** Cancels the call: it rejects with the signal's reason, and is not retried. */
  signal?: AbortSignal;
}

/** Options of `createSession`. */
export interface CreateSessionOptions extends CallOptions {
  /** Your own Idempotency-Key (your request id, say); one is made when you give none. */
  idempotencyKey?: string;
}

/** The API answered an error: its status, the `{error, message}` body and the response headers. */
export class EmbedSessionError extends Error {
  override readonly name = 'EmbedSessionError';

  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly headers: Headers,
  ) {
    super(message);
  }
}

/** No answer came: the connection failed or was reset. `cause` is the underlying failure. */
export class EmbedSessionConnectionError extends Error {
  override readonly name: string = 'EmbedSessionConnectionError';

  /** What failed underneath: the fetch error, or the abort of a timed-out attempt. */
  readonly cause: unknown;

  constructor(message: string, options: { cause: unknown }) {
    super(message);
    this.cause = options.cause;
  }
}

/** No whole answer came within the timeout (`timeout` of the client or of the call). */
export class EmbedSessionTimeoutError extends EmbedSessionConnectionError {
  override readonly name: string = 'EmbedSessionTimeoutError';
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** Longest wait between two attempts, whatever Retry-After says. */
const MAX_DELAY_MS = 30_000;
const BASE_DELAY_MS = 500;
const RETRYABLE_STATUSES = new Set([429, 503]);

/** A client bound to one base URL and API key. */
export function createClient(options: ClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 2;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const clientTimeout = options.timeout ?? DEFAULT_TIMEOUT_MS;

  async function request<T>(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string> } & CallOptions = {},
  ): Promise<T> {
    const timeout = init.timeout ?? clientTimeout;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${options.apiKey}`,
      Accept: 'application/json',
      ...init.headers,
    };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    for (let attempt = 0; ; attempt++) {
      init.signal?.throwIfAborted();
      // One controller per attempt: it ends the attempt at its timeout or when the caller cancels.
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeout);
      const cancel = () => controller.abort(init.signal?.reason);
      init.signal?.addEventListener('abort', cancel, { once: true });
      let failure: EmbedSessionConnectionError;
      try {
        const response = await fetchImpl(`${baseUrl}${path}`, {
          method,
          headers,
          signal: controller.signal,
          ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        });
        if (response.status === 204) return undefined as T;
        if (response.ok) return (await response.json()) as T;
        if (!(retryable(response.status, headers) && attempt < maxRetries)) throw await toError(response);
        await response.body?.cancel();
        await sleep(backoff(attempt, response.headers.get('retry-after')));
        continue;
      } catch (error) {
        if (error instanceof EmbedSessionError) throw error;
        if (init.signal?.aborted) throw init.signal.reason;
        if (error instanceof SyntaxError && !timedOut) throw error;
        // No (whole) answer: the same request, same key, is safe to repeat.
        failure = timedOut
          ? new EmbedSessionTimeoutError(`No answer to ${method} ${path} within ${timeout} ms`, {
              cause: error,
            })
          : new EmbedSessionConnectionError(`Could not reach the API for ${method} ${path}`, {
              cause: error,
            });
      } finally {
        clearTimeout(timer);
        init.signal?.removeEventListener('abort', cancel);
      }
      if (attempt >= maxRetries) throw failure;
      await sleep(backoff(attempt, null));
    }
  }

  /** A POST that creates, with an Idempotency-Key (yours, or a fresh one) so a retry never creates twice. */
  function createOnce<T>(path: string, body: unknown, opts: CreateSessionOptions): Promise<T> {
    const { idempotencyKey = globalThis.crypto.randomUUID(), ...call } = opts;
    return request<T>('POST', path, { ...call, body, headers: { 'Idempotency-Key': idempotencyKey } });
  }

  // Plain functions, not methods: each works when destructured off the client (`const { getSession } = api`).

  /** POST /api/embed/sessions, with an Idempotency-Key so a retry never creates a second session. */
  function createSession(
    body: CreateSessionRequest,
    opts: CreateSessionOptions = {},
  ): Promise<CreateSessionResponse> {
    return createOnce<CreateSessionResponse>('/api/embed/sessions', body, opts);
  }

  /** GET /api/embed/sessions/{id} */
  async function getSession(id: string, opts: CallOptions = {}): Promise<Session | OtherTenantSession> {
    const path = `/api/embed/sessions/${encodeURIComponent(id)}`;
    return (await request<{ session: Session | OtherTenantSession }>('GET', path, opts)).session;
  }

  /** GET /api/embed/sessions: one page. */
  function listSessions(query: ListSessionsQuery, opts: CallOptions = {}): Promise<SessionPage> {
    return request<SessionPage>('GET', `/api/embed/sessions?${queryString(query)}`, opts);
  }

  /** Every session of the query, page after page, following nextCursor to its end. */
  async function* listAllSessions(
    query: Omit<ListSessionsQuery, 'cursor'>,
    opts: CallOptions = {},
  ): AsyncGenerator<Session | OtherTenantSession, void, undefined> {
    let cursor: string | null = null;
    do {
      const page: SessionPage = await listSessions({ ...query, ...(cursor ? { cursor } : {}) }, opts);
      yield* page.data;
      cursor = page.nextCursor;
    } while (cursor);
  }

  /** GET /api/embed/events: one page of your sessions' events, newest first. */
  function listEvents(query: ListEventsQuery = {}, opts: CallOptions = {}): Promise<EventPage> {
    return request<EventPage>('GET', `/api/embed/events?${queryString(query)}`, opts);
  }

  /** POST /api/embed/sessions/{id}/revoke (idempotent: the first revokedAt stays). */
  async function revokeSession(id: string, opts: CallOptions = {}): Promise<Session | OtherTenantSession> {
    const path = `/api/embed/sessions/${encodeURIComponent(id)}/revoke`;
    return (await request<{ session: Session | OtherTenantSession }>('POST', path, opts)).session;
  }

  /** POST /api/embed/sessions/revoke: every session of a user (on one board); counts them. */
  function revokeUserSessions(
    body: RevokeUserSessionsRequest,
    opts: CallOptions = {},
  ): Promise<RevokedCount> {
    return request<RevokedCount>('POST', '/api/embed/sessions/revoke', { ...opts, body });
  }

  /**
   * POST /api/embed/webhooks, with an Idempotency-Key so a retry never creates a second endpoint. Keep
   * the answer's `secret`: no other call shows it.
   */
  function createWebhook(
    body: CreateWebhookRequest,
    opts: CreateSessionOptions = {},
  ): Promise<CreatedWebhook> {
    return createOnce<CreatedWebhook>('/api/embed/webhooks', body, opts);
  }

  /** GET /api/embed/webhooks: one page of your endpoints (at most 16 in all), oldest first, without secrets. */
  function listWebhooks(query: ListWebhooksQuery = {}, opts: CallOptions = {}): Promise<WebhookList> {
    return request<WebhookList>('GET', `/api/embed/webhooks?${queryString(query)}`, opts);
  }

  /** Every one of your endpoints, page after page, following nextCursor to its end. */
  async function* listAllWebhooks(
    query: Omit<ListWebhooksQuery, 'cursor'> = {},
    opts: CallOptions = {},
  ): AsyncGenerator<Webhook, void, undefined> {
    let cursor: string | null = null;
    do {
      const page: WebhookList = await listWebhooks({ ...query, ...(cursor ? { cursor } : {}) }, opts);
      yield* page.data;
      cursor = page.nextCursor;
    } while (cursor);
  }

  /** DELETE /api/embed/webhooks/{id}: it receives nothing more. */
  async function deleteWebhook(id: string, opts: CallOptions = {}): Promise<void> {
    await request<void>('DELETE', `/api/embed/webhooks/${encodeURIComponent(id)}`, opts);
  }

  return {
    createSession,
    getSession,
    listSessions,
    listAllSessions,
    listEvents,
    revokeSession,
    revokeUserSessions,
    createWebhook,
    listWebhooks,
    listAllWebhooks,
    deleteWebhook,
  };
}

export type EmbedSessionClient = ReturnType<typeof createClient>;

/** A status worth another attempt: 429 and 503, and the 409 of a keyed request still in progress. */
function retryable(status: number, headers: Record<string, string>): boolean {
  return RETRYABLE_STATUSES.has(status) || (status === 409 && 'Idempotency-Key' in headers);
}

function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return params.toString();
}

/** Retry-After (seconds or an HTTP date) when the server gave one, otherwise exponential backoff with jitter. */
function backoff(attempt: number, retryAfter: string | null): number {
  if (retryAfter !== null) {
    const seconds = /^\d+$/.test(retryAfter.trim())
      ? Number(retryAfter)
      : (Date.parse(retryAfter) - Date.now()) / 1000;
    if (Number.isFinite(seconds)) return Math.min(MAX_DELAY_MS, Math.max(0, seconds * 1000));
  }
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

async function toError(response: Response): Promise<EmbedSessionError> {
  const text = await response.text();
  let body: Partial<ErrorBody> = {};
  try {
    body = JSON.parse(text) as Partial<ErrorBody>;
  } catch {
    // Not the API's JSON (a proxy in between): keep the status and the text.
  }
  return new EmbedSessionError(
    response.status,
    body.error ?? response.statusText,
    body.message ?? text.slice(0, 200),
    response.headers,
  );
}
