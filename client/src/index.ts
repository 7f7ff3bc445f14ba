/**
 * A typed client for the Embed Session API. No dependencies: it uses the platform's `fetch` (Node 18+,
 * browsers are not the place for API keys). Types come from the service's OpenAPI document
 * (`openapi.generated.ts`, generated from docs/openapi.json), never written twice.
 *
 * Retries are safe by construction: every create carries an `Idempotency-Key` (one is made when the
 * caller gives none), reads are reads, and revocations are idempotent. A create whose key an earlier
 * attempt still holds (`409`) is retried too, after its `Retry-After`: it then gets that attempt's answer.
 */
import type { components, operations } from './openapi.generated.js';

export type CreateSessionRequest = components['schemas']['CreateSessionRequest'];
export type CreateSessionResponse = components['schemas']['CreateSessionResponse'];
export type CreatedSession = components['schemas']['CreatedSession'];
export type Session = components['schemas']['Session'];
/** A session another tenant created on your organization's public board: its outline only. */
export type OtherTenantSession = components['schemas']['OtherTenantSession'];
export type SessionPage = components['schemas']['SessionPage'];
export type RevokeUserSessionsRequest = components['schemas']['RevokeUserSessionsRequest'];
export type RevokedCount = components['schemas']['RevokedCount'];
export type ErrorBody = components['schemas']['Error'];
export type CreateWebhookRequest = components['schemas']['CreateWebhookRequest'];
export type Webhook = components['schemas']['Webhook'];
/** A new endpoint and its signing secret, which no other call shows. */
export type CreatedWebhook = components['schemas']['CreatedWebhook'];
export type ListSessionsQuery = NonNullable<operations['listSessions']['parameters']['query']>;

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

  async function request<T>(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${options.apiKey}`,
      Accept: 'application/json',
      ...init.headers,
    };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetchImpl(`${baseUrl}${path}`, {
          method,
          headers,
          ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        });
      } catch (failure) {
        // No answer at all (connection refused or reset): the same request, same key, is safe to repeat.
        if (attempt >= maxRetries) throw failure;
        await sleep(backoff(attempt, null));
        continue;
      }
      if (response.status === 204) return undefined as T;
      if (response.ok) return (await response.json()) as T;
      if (retryable(response.status, headers) && attempt < maxRetries) {
        await response.body?.cancel();
        await sleep(backoff(attempt, response.headers.get('retry-after')));
        continue;
      }
      throw await toError(response);
    }
  }

  return {
    /** POST /api/embed/sessions, with an Idempotency-Key so a retry never creates a second session. */
    createSession(body: CreateSessionRequest, opts: { idempotencyKey?: string } = {}) {
      const idempotencyKey = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
      return request<CreateSessionResponse>('POST', '/api/embed/sessions', {
        body,
        headers: { 'Idempotency-Key': idempotencyKey },
      });
    },

    /** GET /api/embed/sessions/{id} */
    async getSession(id: string): Promise<Session | OtherTenantSession> {
      return (
        await request<{ session: Session | OtherTenantSession }>(
          'GET',
          `/api/embed/sessions/${encodeURIComponent(id)}`,
        )
      ).session;
    },

    /** GET /api/embed/sessions: one page. */
    listSessions(query: ListSessionsQuery): Promise<SessionPage> {
      return request<SessionPage>('GET', `/api/embed/sessions?${queryString(query)}`);
    },

    /** Every session of the query, page after page, following nextCursor to its end. */
    async *listAllSessions(
      query: Omit<ListSessionsQuery, 'cursor'>,
    ): AsyncGenerator<Session | OtherTenantSession, void, undefined> {
      let cursor: string | null = null;
      do {
        const page: SessionPage = await this.listSessions({ ...query, ...(cursor ? { cursor } : {}) });
        yield* page.data;
        cursor = page.nextCursor;
      } while (cursor);
    },

    /** POST /api/embed/sessions/{id}/revoke (idempotent: the first revokedAt stays). */
    async revokeSession(id: string): Promise<Session | OtherTenantSession> {
      const path = `/api/embed/sessions/${encodeURIComponent(id)}/revoke`;
      return (await request<{ session: Session | OtherTenantSession }>('POST', path)).session;
    },

    /** POST /api/embed/sessions/revoke: every session of a user (on one board); counts them. */
    revokeUserSessions(body: RevokeUserSessionsRequest): Promise<RevokedCount> {
      return request<RevokedCount>('POST', '/api/embed/sessions/revoke', { body });
    },

    /**
     * POST /api/embed/webhooks, with an Idempotency-Key so a retry never creates a second endpoint. Keep
     * the answer's `secret`: no other call shows it.
     */
    createWebhook(
      body: CreateWebhookRequest,
      opts: { idempotencyKey?: string } = {},
    ): Promise<CreatedWebhook> {
      const idempotencyKey = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
      return request<CreatedWebhook>('POST', '/api/embed/webhooks', {
        body,
        headers: { 'Idempotency-Key': idempotencyKey },
      });
    },

    /** GET /api/embed/webhooks: your endpoints, without secrets. */
    async listWebhooks(): Promise<Webhook[]> {
      return (await request<{ data: Webhook[] }>('GET', '/api/embed/webhooks')).data;
    },

    /** DELETE /api/embed/webhooks/{id}: it receives nothing more. */
    async deleteWebhook(id: string): Promise<void> {
      await request<void>('DELETE', `/api/embed/webhooks/${encodeURIComponent(id)}`);
    },
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
