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
export type RotateWebhookSecretRequest = components['schemas']['RotateWebhookSecretRequest'];
export type RotatedWebhookSecret = components['schemas']['RotatedWebhookSecret'];
export type ErrorBody = components['schemas']['Error'];
export type PutBoardRequest = components['schemas']['PutBoardRequest'];
export type ProvisionedBoard = components['schemas']['ProvisionedBoard'];
export type ProvisionedBoardResult = components['schemas']['ProvisionedBoardResult'];
export type DeletedBoard = components['schemas']['DeletedBoard'];
export type MemberList = components['schemas']['MemberList'];
export type Membership = components['schemas']['Membership'];
export type RemovedMember = components['schemas']['RemovedMember'];
export type ApiKeySummary = components['schemas']['ApiKeySummary'];
export type CreateApiKeyRequest = components['schemas']['CreateApiKeyRequest'];
export type CreatedApiKey = components['schemas']['CreatedApiKey'];

/** AWS credentials, as the AWS SDKs' credential providers give them. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * How to sign the provisioning routes (`/admin/…`): AWS Signature Version 4, service `execute-api`, with
 * the standard SDK signer (`@smithy/signature-v4`, an optional peer dependency, loaded only then).
 */
export interface AwsSigning {
  /** The stage's region (`local` against `npm start`). */
  region: string;
  /** The credentials, or a provider (`fromNodeProviderChain()` of `@aws-sdk/credential-providers`, say). */
  credentials: AwsCredentials | (() => Promise<AwsCredentials>);
}

export interface ClientOptions {
  /** The API's base URL: the stage URL in AWS (the ApiUrl output), http://127.0.0.1:3000 locally. */
  baseUrl: string;
  /** An API key (`esk_…`), for every route but the provisioning ones. Keep it on the server. */
  apiKey?: string;
  /** AWS credentials: the client then signs every request with SigV4, as the provisioning routes need. */
  aws?: AwsSigning;
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
  const sign = options.aws ? sigV4Signer(options.aws) : undefined;

  async function request<T>(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; retries?: number } & CallOptions = {},
  ): Promise<T> {
    const attempts = init.retries ?? maxRetries;
    const timeout = init.timeout ?? clientTimeout;
    const headers: Record<string, string> = {
      ...(options.apiKey !== undefined && !sign ? { Authorization: `Bearer ${options.apiKey}` } : {}),
      Accept: 'application/json',
      ...init.headers,
    };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const body = init.body !== undefined ? JSON.stringify(init.body) : undefined;
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
        const url = `${baseUrl}${path}`;
        // Signed anew for each attempt: a signature names its time, and AWS refuses one 15 minutes old.
        const sent = sign ? await sign(method, url, headers, body) : headers;
        const response = await fetchImpl(url, {
          method,
          headers: sent,
          signal: controller.signal,
          ...(body !== undefined ? { body } : {}),
        });
        if (response.status === 204) return undefined as T;
        if (response.ok) return (await response.json()) as T;
        if (!(retryable(response.status, headers) && attempt < attempts)) throw await toError(response);
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
      if (attempt >= attempts) throw failure;
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

  /**
   * POST /api/embed/webhooks/{id}/rotate-secret, with an Idempotency-Key so a retry answers the same
   * secret rather than rotating again. Keep the answer's `secret`: no other call shows it; the old one
   * signs too until `previousSecretExpiresAt`.
   */
  function rotateWebhookSecret(
    id: string,
    body: RotateWebhookSecretRequest = {},
    opts: CreateSessionOptions = {},
  ): Promise<RotatedWebhookSecret> {
    return createOnce<RotatedWebhookSecret>(
      `/api/embed/webhooks/${encodeURIComponent(id)}/rotate-secret`,
      body,
      opts,
    );
  }

  /** DELETE /api/embed/webhooks/{id}: it receives nothing more. */
  async function deleteWebhook(id: string, opts: CallOptions = {}): Promise<void> {
    await request<void>('DELETE', `/api/embed/webhooks/${encodeURIComponent(id)}`, opts);
  }

  // The provisioning routes: create the client with `aws` to call them.
  const org = (orgId: string) => `/admin/orgs/${encodeURIComponent(orgId)}`;

  /** GET /admin/orgs/{orgId}/boards */
  async function listBoards(orgId: string, opts: CallOptions = {}): Promise<ProvisionedBoard[]> {
    return (await request<{ data: ProvisionedBoard[] }>('GET', `${org(orgId)}/boards`, opts)).data;
  }

  /** PUT /admin/orgs/{orgId}/boards/{boardId}: the board's whole state; the same state again writes nothing. */
  function putBoard(
    orgId: string,
    boardId: string,
    state: PutBoardRequest,
    opts: CallOptions = {},
  ): Promise<ProvisionedBoardResult> {
    return request('PUT', `${org(orgId)}/boards/${encodeURIComponent(boardId)}`, { ...opts, body: state });
  }

  /** DELETE /admin/orgs/{orgId}/boards/{boardId}: ends its sessions, then deletes it. */
  function deleteBoard(orgId: string, boardId: string, opts: CallOptions = {}): Promise<DeletedBoard> {
    return request('DELETE', `${org(orgId)}/boards/${encodeURIComponent(boardId)}`, opts);
  }

  /** GET /admin/orgs/{orgId}/members */
  function listMembers(orgId: string, opts: CallOptions = {}): Promise<MemberList> {
    return request('GET', `${org(orgId)}/members`, opts);
  }

  /** PUT /admin/orgs/{orgId}/members/{userId} */
  function putMember(orgId: string, userId: string, opts: CallOptions = {}): Promise<Membership> {
    return request('PUT', `${org(orgId)}/members/${encodeURIComponent(userId)}`, opts);
  }

  /** DELETE /admin/orgs/{orgId}/members/{userId}; `endSessions` ends the member's sessions there too. */
  function removeMember(
    orgId: string,
    userId: string,
    options: { endSessions?: boolean } & CallOptions = {},
  ): Promise<RemovedMember> {
    const { endSessions, ...opts } = options;
    const query = endSessions ? '?endSessions=true' : '';
    return request('DELETE', `${org(orgId)}/members/${encodeURIComponent(userId)}${query}`, opts);
  }

  /** GET /admin/api-keys: every key, or one user's; never the keys themselves. */
  async function listApiKeys(userId?: string, opts: CallOptions = {}): Promise<ApiKeySummary[]> {
    const query = userId !== undefined ? `?${queryString({ userId })}` : '';
    return (await request<{ data: ApiKeySummary[] }>('GET', `/admin/api-keys${query}`, opts)).data;
  }

  /** POST /admin/api-keys: the key is in this answer only. Not retried: a retry would issue another key. */
  function createApiKey(body: CreateApiKeyRequest, opts: CallOptions = {}): Promise<CreatedApiKey> {
    return request('POST', '/admin/api-keys', { ...opts, body, retries: 0 });
  }

  /** POST /admin/api-keys/{keyId}/revoke; `endSessions` ends every session the key created too. */
  function revokeApiKey(
    keyId: string,
    options: { endSessions?: boolean } & CallOptions = {},
  ): Promise<ApiKeySummary> {
    const { endSessions, ...opts } = options;
    return request('POST', `/admin/api-keys/${encodeURIComponent(keyId)}/revoke`, {
      ...opts,
      body: { endSessions: endSessions === true },
    });
  }

  return {
    listBoards,
    putBoard,
    deleteBoard,
    listMembers,
    putMember,
    removeMember,
    listApiKeys,
    createApiKey,
    revokeApiKey,
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
    rotateWebhookSecret,
  };
}

export type EmbedSessionClient = ReturnType<typeof createClient>;

/**
 * SHA-256 and HMAC-SHA-256 as the SigV4 signer asks for them, from the platform's Web Crypto (the client
 * needs no Node module): the signer hashes small canonical strings, so each digest buffers its input.
 */
class WebCryptoSha256 {
  readonly #chunks: Uint8Array[] = [];
  readonly #secret: Uint8Array<ArrayBuffer> | undefined;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    // A copy of its own: a fresh ArrayBuffer, as Web Crypto wants.
    this.#secret = secret === undefined ? undefined : new Uint8Array(bytesOf(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#chunks.push(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    const data = new Uint8Array(this.#chunks.reduce((size, chunk) => size + chunk.length, 0));
    let offset = 0;
    for (const chunk of this.#chunks) {
      data.set(chunk, offset);
      offset += chunk.length;
    }
    const { subtle } = globalThis.crypto;
    if (this.#secret === undefined) return new Uint8Array(await subtle.digest('SHA-256', data));
    const key = await subtle.importKey('raw', this.#secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    return new Uint8Array(await subtle.sign('HMAC', key, data));
  }
}

function bytesOf(data: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof data === 'string') return new TextEncoder().encode(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** Signs a request as the AWS SDKs do (service `execute-api`); the signer is loaded on first use. */
function sigV4Signer(aws: AwsSigning) {
  let signer: Promise<{ sign: (request: never) => Promise<{ headers: Record<string, string> }> }> | undefined;
  const load = async () => {
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const given = aws.credentials;
    return new SignatureV4({
      service: 'execute-api',
      region: aws.region,
      sha256: WebCryptoSha256,
      credentials: typeof given === 'function' ? given : async () => given,
    }) as unknown as { sign: (request: never) => Promise<{ headers: Record<string, string> }> };
  };
  return async (
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<Record<string, string>> => {
    signer ??= load();
    const target = new URL(url);
    const query: Record<string, string> = {};
    target.searchParams.forEach((value, name) => {
      query[name] = value;
    });
    const signed = await (await signer).sign({
      method,
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port ? Number(target.port) : undefined,
      path: target.pathname,
      query,
      headers: { ...headers, host: target.host },
      ...(body !== undefined ? { body } : {}),
    } as never);
    // fetch sets Host itself, from the URL it was given: the same value.
    const { host: _host, ...sent } = signed.headers;
    return sent;
  };
}

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
