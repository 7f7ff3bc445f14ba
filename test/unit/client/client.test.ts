import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createClient,
  EmbedSessionConnectionError,
  EmbedSessionError,
  EmbedSessionTimeoutError,
} from '@embed-session/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateClientTypes, TYPES_PATH } from '../../../client/generate-types';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A fetch that answers from a script of responses (or throws for `'network'`), recording each request. */
function scriptedFetch(script: Array<Response | 'network'>) {
  const sent: Sent[] = [];
  const fetch = async (url: string | URL | Request, init: RequestInit = {}) => {
    sent.push({
      url: String(url),
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: init.body as string | undefined,
    });
    const next = script.shift();
    if (!next) throw new Error('no more scripted responses');
    if (next === 'network') throw new TypeError('fetch failed');
    return next;
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
const CREATED = { session: { id: 's1' }, sessionToken: 't', embedUrl: 'u' };
const BODY = { boardId: 'b', userId: 'u', email: 'a@b.co' };

function client(script: Array<Response | 'network'>, maxRetries?: number) {
  const fake = scriptedFetch(script);
  const sleeps: number[] = [];
  const api = createClient({
    baseUrl: 'https://api.example.com/prod/',
    apiKey: 'esk_test',
    fetch: fake.fetch,
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { api, sent: fake.sent, sleeps };
}

describe('the typed client', () => {
  it('has types generated from the current OpenAPI document (run `npm run build:client-types`)', async () => {
    expect(readFileSync(TYPES_PATH, 'utf8')).toBe(await generateClientTypes());
  });

  it('sends the API key, JSON and a fresh Idempotency-Key with every create', async () => {
    const { api, sent } = client([json(201, CREATED), json(201, CREATED)]);
    await expect(api.createSession(BODY)).resolves.toEqual(CREATED);
    await api.createSession(BODY);
    expect(sent[0]).toMatchObject({
      url: 'https://api.example.com/prod/api/embed/sessions',
      method: 'POST',
      headers: { Authorization: 'Bearer esk_test', 'Content-Type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    const keys = sent.map((s) => s.headers['Idempotency-Key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
  });

  it('retries 503, 429 and network failures with the same Idempotency-Key, so a retry never creates twice', async () => {
    const { api, sent, sleeps } = client([
      json(503, {}, { 'Retry-After': '2' }),
      'network',
      json(201, CREATED),
    ]);
    await expect(api.createSession(BODY, { idempotencyKey: 'order-42' })).resolves.toEqual(CREATED);
    expect(sent.map((s) => s.headers['Idempotency-Key'])).toEqual(['order-42', 'order-42', 'order-42']);
    expect(sleeps[0]).toBe(2000);
    expect(sleeps[1]).toBeGreaterThanOrEqual(500);
    expect(sleeps[1]).toBeLessThanOrEqual(1000);
  });

  it('retries a create whose Idempotency-Key is still in progress (409) after its Retry-After, with the same key', async () => {
    const inProgress = {
      error: 'Conflict',
      message: 'A request with this Idempotency-Key is still in progress; retry shortly',
    };
    const { api, sent, sleeps } = client([
      json(409, inProgress, { 'Retry-After': '3' }),
      json(201, CREATED, { 'Idempotent-Replayed': 'true' }),
    ]);
    await expect(api.createSession(BODY, { idempotencyKey: 'order-43' })).resolves.toEqual(CREATED);
    expect(sent.map((s) => s.headers['Idempotency-Key'])).toEqual(['order-43', 'order-43']);
    expect(sleeps).toEqual([3000]);
  });

  it('throws a 409 once the retry budget is spent', async () => {
    const conflict = () => json(409, { error: 'Conflict', message: 'in progress' }, { 'Retry-After': '1' });
    const { api, sent } = client([conflict(), conflict()], 1);
    await expect(api.createSession(BODY)).rejects.toMatchObject({ status: 409, error: 'Conflict' });
    expect(sent).toHaveLength(2);
  });

  it('honours Retry-After given as an HTTP date, and caps every wait at 30 s', async () => {
    const later = new Date(Date.now() + 3_000).toUTCString();
    const { api, sleeps } = client([
      json(429, {}, { 'Retry-After': later }),
      json(429, {}, { 'Retry-After': '3600' }),
      json(200, { session: { id: 'x' } }),
    ]);
    await api.getSession('x');
    expect(sleeps[0]).toBeGreaterThan(1000);
    expect(sleeps[0]).toBeLessThanOrEqual(3000);
    expect(sleeps[1]).toBe(30_000);
  });

  it('gives up after maxRetries and throws the last answer as an EmbedSessionError', async () => {
    const { api, sent } = client(
      [
        json(503, { error: 'Service Unavailable', message: 'retry shortly' }, { 'Retry-After': '1' }),
        json(503, { error: 'Service Unavailable', message: 'retry shortly' }, { 'Retry-After': '1' }),
      ],
      1,
    );
    const error = await api.revokeSession('s1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedSessionError);
    expect(error).toMatchObject({ status: 503, error: 'Service Unavailable', message: 'retry shortly' });
    expect((error as EmbedSessionError).headers.get('retry-after')).toBe('1');
    expect(sent).toHaveLength(2);
  });

  it('never retries a client error', async () => {
    const { api, sent } = client([
      json(404, { error: 'Not Found', message: 'No session with this id was found' }),
    ]);
    await expect(api.getSession('nope')).rejects.toMatchObject({ status: 404, error: 'Not Found' });
    expect(sent).toHaveLength(1);
  });

  it('throws a network failure, once the retries are spent, as a connection error carrying its cause', async () => {
    const { api } = client(['network', 'network', 'network']);
    const error = await api.getSession('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedSessionConnectionError);
    expect(error).not.toBeInstanceOf(EmbedSessionError);
    expect(error).not.toBeInstanceOf(EmbedSessionTimeoutError);
    expect((error as Error).message).toBe('Could not reach the API for GET /api/embed/sessions/x');
    expect((error as EmbedSessionConnectionError).cause).toEqual(new TypeError('fetch failed'));
  });

  it('works with methods destructured off the client', async () => {
    const page = { data: [{ id: 's1' }], nextCursor: null };
    const { api, sent } = client([json(201, CREATED), json(200, page), json(200, page)]);
    const { createSession, listSessions, listAllSessions } = api;
    await expect(createSession(BODY)).resolves.toEqual(CREATED);
    await expect(listSessions({ userId: 'u' })).resolves.toEqual(page);
    const all = [];
    for await (const session of listAllSessions({ userId: 'u' })) all.push(session);
    expect(all).toEqual([{ id: 's1' }]);
    expect(sent.map((request) => request.method)).toEqual(['POST', 'GET', 'GET']);
  });

  it('sends nothing for a call whose signal is already aborted, and rejects with its reason', async () => {
    const { api, sent } = client([json(200, { session: { id: 'x' } })]);
    const reason = new Error('the page was closed');
    await expect(api.getSession('x', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(sent).toEqual([]);
  });

  it('keeps the status and the text of an answer that is not the API’s JSON', async () => {
    const { api } = client([
      new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
    ]);
    await expect(api.getSession('x')).rejects.toMatchObject({
      status: 502,
      error: 'Bad Gateway',
      message: '<html>bad gateway</html>',
    });
  });

  it('pages through every session with listAllSessions, following nextCursor to its end', async () => {
    const { api, sent } = client([
      json(200, { data: [{ id: 'a' }, { id: 'b' }], nextCursor: 'c1' }),
      json(200, { data: [{ id: 'c' }], nextCursor: null }),
    ]);
    const ids: string[] = [];
    for await (const session of api.listAllSessions({ userId: 'u 1', limit: 2 })) ids.push(session.id);
    expect(ids).toEqual(['a', 'b', 'c']);
    expect(sent.map((s) => new URL(s.url).search)).toEqual([
      '?userId=u+1&limit=2',
      '?userId=u+1&limit=2&cursor=c1',
    ]);
  });

  it('escapes ids in paths', async () => {
    const { api, sent } = client([json(200, { session: {} }), json(200, { revoked: 3 })]);
    await api.revokeSession('a/b');
    await expect(api.revokeUserSessions({ userId: 'u' })).resolves.toEqual({ revoked: 3 });
    expect(sent[0]?.url).toBe('https://api.example.com/prod/api/embed/sessions/a%2Fb/revoke');
    expect(sent[1]?.body).toBe('{"userId":"u"}');
  });
});

describe('the typed client against a server that never answers', () => {
  /** Accepts every request and holds its socket open without a byte of answer. */
  let silent: Server;
  let baseUrl: string;
  const received: IncomingMessage[] = [];
  beforeAll(async () => {
    silent = createServer((request) => {
      received.push(request);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    silent?.closeAllConnections();
    silent?.close();
  });

  const noWait = async () => {};

  it('gives up each attempt at the client’s timeout and throws a timeout error, a connection error', async () => {
    // Attempts counted where they are sent: on a loaded machine the server may not have parsed the last
    // one before the client abandons it.
    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts += 1;
      return fetch(input, init);
    };
    const api = createClient({
      baseUrl,
      apiKey: 'esk_test',
      timeout: 100,
      maxRetries: 1,
      sleep: noWait,
      fetch: counting,
    });
    const error = await api.getSession('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedSessionTimeoutError);
    expect(error).toBeInstanceOf(EmbedSessionConnectionError);
    expect((error as Error).message).toBe('No answer to GET /api/embed/sessions/x within 100 ms');
    expect((error as EmbedSessionTimeoutError).cause).toBeDefined();
    // Two attempts, each abandoned at its timeout.
    expect(attempts).toBe(2);
  });

  it('takes a call’s own timeout over the client’s', async () => {
    const api = createClient({ baseUrl, apiKey: 'esk_test', timeout: 60_000, maxRetries: 0, sleep: noWait });
    await expect(api.listSessions({ userId: 'u' }, { timeout: 50 })).rejects.toThrow(
      'No answer to GET /api/embed/sessions?userId=u within 50 ms',
    );
  });

  it('stops a call cancelled through its signal at once, with the signal’s reason and no retry', async () => {
    const before = received.length;
    const api = createClient({ baseUrl, apiKey: 'esk_test', timeout: 60_000, sleep: noWait });
    const controller = new AbortController();
    const reason = new Error('the user went away');
    const call = api.revokeSession('x', { signal: controller.signal });
    while (received.length === before) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(received.length - before).toBe(1);
  });
});
