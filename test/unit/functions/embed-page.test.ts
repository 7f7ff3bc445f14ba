import { createHash } from 'node:crypto';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { escapeHtml } from '#lib/adapters/http/embed/html';
import { type EmbedErrorCode, TEXTS } from '#lib/adapters/http/embed/i18n';
import { sessionIdOfToken } from '#lib/domain/credentials';
import { ConfigError, DEFAULT_FRAME_ANCESTORS } from '#lib/platform/config';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { embedEvent, lambdaContext, proxyEvent } from '#test/support/events';
import { handlerSuite, loadHandler, dynamoCalls as recordedCalls } from '#test/support/harness';
import { invokeWithRequestId } from '#test/support/invoke';

// The document client is created when the handler module loads, so the mock must exist first.
const ddb = mockClient(DynamoDBDocumentClient);

const loadEmbedPage = (env: Record<string, string> = {}) =>
  loadHandler(() => import('#functions/embed-page'), env);

const SESSIONS_TABLE = 'test-sessions';
const BOARDS_TABLE = 'test-boards';
const TOKEN_INDEX = 'tokenHash-index';

/**
 * What opening a link reads: the session by the id its token derives, then its cut-off records and its
 * board. No index.
 */
const OPENING_READS = [
  `GetCommand ${SESSIONS_TABLE}`,
  `BatchGetCommand ${SESSIONS_TABLE}`,
  `GetCommand ${BOARDS_TABLE}`,
];

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** A token of the right shape (32 URL-safe characters) named for its stored situation. */
const token = (situation: string) => `${situation}_Token-0123456789abcdefghij`.slice(0, 32);
const VALID = token('Valid');
const FIRST = token('First');
const EXPIRED = token('Expired');
const ORPHAN = token('Orphan');
const UNKNOWN = token('Unknown');
const REVOKED = token('Revoked');
/** A session created with bindToBrowser, not opened yet. */
const BINDS = token('Binds');
/** A session bound to the browser holding SECRET. */
const BOUND = token('Bound');
/** A session of a board with its own list of embed origins. */
const LISTED = token('Listed');
/** A session created before ids were derived from tokens: found through the token index. */
const LEGACY = token('Legacy');
const SECRET = 'Binding_Secret-0123456789abcdefghijklmnopqr';
const COOKIE = { Cookie: `theme=dark; __Host-embed_binding=${SECRET}` };
const BOARD_ORIGINS = ['https://app.acme.com', 'https://*.acme.com'];

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A session item as the DynamoDB adapter stores it: metadata as JSON text, the token only as its hash. */
function storedItem(token: string, overrides: Record<string, unknown> = {}) {
  const expiresAt = Date.now() + HOUR;
  return {
    id: sessionIdOfToken(token),
    boardId: 'board-public',
    tokenHash: sha256(token),
    userId: 'customer-7',
    createdByUserId: 'owner-1',
    createdByKeyId: 'key_0123456789abcdef01234567',
    email: 'grace@example.com',
    firstName: 'Grace',
    lastName: 'Hopper',
    avatarUrl: 'https://img.example.com/g.png',
    plan: 'pro',
    metadata: JSON.stringify({ team: 'ops', seats: 3 }),
    createdAt: iso(Date.now() - HOUR),
    expiresAt: iso(expiresAt),
    ttl: Math.ceil(expiresAt / 1000),
    ...overrides,
  };
}

/** The session bound to the browser holding SECRET, `overrides` on top. */
const boundItem = (overrides: Record<string, unknown>) =>
  storedItem(BOUND, {
    bindToBrowser: true,
    bindingHash: sha256(`${sessionIdOfToken(BOUND)}:${SECRET}`),
    ...overrides,
  });

const queryFor = (token: string) => ({
  TableName: SESSIONS_TABLE,
  IndexName: TOKEN_INDEX,
  ExpressionAttributeValues: { ':h': sha256(token) },
});

/** The session items the table holds, by id: what a BatchGetItem of the sessions table answers. */
const SESSION_ITEMS = new Map<string, Record<string, unknown>>();

/**
 * Each stored session: the token index answers where it is, the table answers what it is (to the page's
 * BatchGetItem of the session and its cut-off records, none here, and to a GetItem).
 */
function seedSession(token: string, item: ReturnType<typeof storedItem>) {
  ddb.on(QueryCommand, queryFor(token)).resolves({ Items: [{ id: item.id, boardId: item.boardId }] });
  ddb.on(GetCommand, { TableName: SESSIONS_TABLE, Key: { id: item.id } }).resolves({ Item: item });
  SESSION_ITEMS.set(item.id, item);
}

function seedTables() {
  SESSION_ITEMS.clear();
  ddb.on(QueryCommand).resolves({ Items: [] });
  ddb.on(GetCommand).resolves({});
  ddb
    .on(BatchGetCommand)
    .callsFake((input: { RequestItems: Record<string, { Keys: { id: string }[] }> }) => ({
      Responses: {
        [SESSIONS_TABLE]: (input.RequestItems[SESSIONS_TABLE]?.Keys ?? []).flatMap(({ id }) => {
          const item = SESSION_ITEMS.get(id);
          return item ? [item] : [];
        }),
      },
    }));
  // Opened before: a later load, which writes nothing (FIRST is one never opened).
  seedSession(VALID, storedItem(VALID, { openedAt: iso(Date.now() - 60_000) }));
  seedSession(FIRST, storedItem(FIRST));
  seedSession(
    EXPIRED,
    storedItem(EXPIRED, { expiresAt: iso(Date.now() - 1000), ttl: Math.ceil(Date.now() / 1000) }),
  );
  seedSession(ORPHAN, storedItem(ORPHAN, { boardId: 'board-gone' }));
  seedSession(
    REVOKED,
    storedItem(REVOKED, { revokedAt: iso(Date.now() - 1000), revokedByUserId: 'owner-1' }),
  );
  seedSession(BINDS, storedItem(BINDS, { bindToBrowser: true }));
  seedSession(BOUND, boundItem({ boundAt: iso(Date.now() - 60_000), openedAt: iso(Date.now() - 60_000) }));
  seedSession(LISTED, storedItem(LISTED, { boardId: 'board-acme' }));
  ddb.on(GetCommand, { TableName: BOARDS_TABLE, Key: { boardId: 'board-public' } }).resolves({
    Item: { boardId: 'board-public', orgId: 'org-a', visibility: 'PUBLIC', name: 'Product roadmap' },
  });
  ddb.on(GetCommand, { TableName: BOARDS_TABLE, Key: { boardId: 'board-acme' } }).resolves({
    Item: {
      boardId: 'board-acme',
      orgId: 'org-a',
      visibility: 'PUBLIC',
      name: 'Acme',
      embedOrigins: BOARD_ORIGINS,
    },
  });
  ddb.on(UpdateCommand).resolves({});
}

const JSON_ACCEPT = { Accept: 'application/json' };

const dynamoCalls = () => recordedCalls(ddb);

function expectEmbedHeaders(result: APIGatewayProxyResult, frameAncestors = DEFAULT_FRAME_ANCESTORS) {
  const headers = result.headers ?? {};
  const csp = String(headers['Content-Security-Policy']);
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain(`frame-ancestors ${frameAncestors}`);
  expect(csp).not.toContain('unsafe-inline');
  expect(headers['Referrer-Policy']).toBe('no-referrer');
  expect(headers['Cache-Control']).toBe('no-store');
  expect(headers['X-Content-Type-Options']).toBe('nosniff');
  expect(Object.keys(headers).map((name) => name.toLowerCase())).not.toContain('x-frame-options');
}

/** An error page with `status`, naming `code` and saying its end-user sentence (never the status). */
function expectHtmlError(result: APIGatewayProxyResult, status: number, code: EmbedErrorCode) {
  expect(result.statusCode).toBe(status);
  expect(result.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
  expect(result.body).toMatch(/^<!doctype html>/);
  expect(result.body).toContain(`data-testid="embed-error" data-code="${code}"`);
  expect(result.body).toContain(escapeHtml(TEXTS.en.notices[code].sentence));
  expect(/<div class="notice"[\s\S]*?<\/div>/.exec(result.body)?.[0]).not.toContain(String(status));
  expectEmbedHeaders(result);
}

const suite = handlerSuite({ mock: ddb, load: loadEmbedPage, seed: seedTables, coldPerTest: true });
afterEach(() => {
  vi.useRealTimers();
});

const invoke = (event: APIGatewayProxyEvent, requestId = 'embed-request-1') =>
  invokeWithRequestId(suite.handler(), event, requestId);

describe('embed-page handler: a usable token', () => {
  it('answers 200 with the HTML page of the board and the user, and the embed security headers', async () => {
    const result = await invoke(embedEvent({ token: VALID }));
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expectEmbedHeaders(result);
    expect(result.body).toMatch(/^<!doctype html>/);
    expect(result.body).toContain('data-testid="board-name">Product roadmap<');
    expect(result.body).toContain('data-testid="user-name" title="Grace Hopper">Grace Hopper<');
    expect(result.body).toContain('data-testid="plan" title="pro">pro<');
  });

  it('costs three DynamoDB reads and no index: the session by its id, then its cut-offs (consistently) and its board', async () => {
    await invoke(embedEvent({ token: VALID }));
    expect(dynamoCalls()).toEqual(OPENING_READS);
    const [session, cutoffs, board] = ddb.calls().map((call) => (call.args[0] as { input: unknown }).input);
    expect(session).toEqual({
      TableName: SESSIONS_TABLE,
      Key: { id: sessionIdOfToken(VALID) },
      ConsistentRead: true,
    });
    expect(JSON.stringify(session)).not.toContain(VALID);
    // One consistent batch of the cut-off records that could cover it: this session was stored before
    // its organization was recorded (a creator and a key, no organization), so its creator's two, its
    // board's, its user's, the stage's, its creating key's and the legacy board-and-user record; a
    // session with an organization has eleven.
    const batch = (
      cutoffs as { RequestItems: Record<string, { Keys: { id: string }[]; ConsistentRead: boolean }> }
    ).RequestItems[SESSIONS_TABLE];
    expect(batch?.ConsistentRead).toBe(true);
    // One copy of each (copy 0, the record's own id, or `#n`: the one the session id picks).
    expect(batch?.Keys.map((key) => key.id.replace(/[0-9a-f]{64}(#[1-7])?$/, '…'))).toEqual(
      Array(7).fill('cutoff#…'),
    );
    expect(board).toEqual({ TableName: BOARDS_TABLE, Key: { boardId: 'board-public' } });
  });

  it('finds a session created before ids were derived from tokens through the token index, once', async () => {
    const legacy = { ...storedItem(LEGACY), id: 'session-legacy' };
    seedSession(LEGACY, legacy);
    const result = await invoke(embedEvent({ token: LEGACY }));
    expect(result.statusCode).toBe(200);
    expect(dynamoCalls()).toEqual([
      `GetCommand ${SESSIONS_TABLE}`,
      `QueryCommand ${SESSIONS_TABLE}`,
      `BatchGetCommand ${SESSIONS_TABLE}`,
      `GetCommand ${BOARDS_TABLE}`,
      `UpdateCommand ${SESSIONS_TABLE}`,
    ]);
    const query = ddb.commandCalls(QueryCommand)[0]?.args[0].input;
    expect(query).toMatchObject({
      IndexName: TOKEN_INDEX,
      KeyConditionExpression: 'tokenHash = :h',
      ExpressionAttributeValues: { ':h': sha256(LEGACY) },
    });
  });

  it('hands the stored metadata, parsed from its JSON text, to the page context without the token hash', async () => {
    const result = await invoke(embedEvent({ token: VALID }));
    const island = /<script type="application\/json" id="embed-context">(.*?)<\/script>/s.exec(result.body);
    const context = JSON.parse(island?.[1] ?? 'null') as { session: Record<string, unknown> };
    expect(context.session).toMatchObject({
      id: sessionIdOfToken(VALID),
      boardId: 'board-public',
      userId: 'customer-7',
      metadata: { team: 'ops', seats: 3 },
    });
    expect(context.session).not.toHaveProperty('tokenHash');
    expect(context.session).not.toHaveProperty('ttl');
    expect(result.body).not.toContain(sha256(VALID));
    expect(result.body).not.toContain(VALID);
  });

  it('answers the public context as JSON, with the same headers, when Accept is application/json', async () => {
    const result = await invoke(embedEvent({ token: VALID }, JSON_ACCEPT));
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    expectEmbedHeaders(result);
    const body = JSON.parse(result.body) as { board: unknown; session: Record<string, unknown> };
    expect(body.board).toEqual({ id: 'board-public', name: 'Product roadmap' });
    expect(body.session.email).toBe('grace@example.com');
    expect(body.session).not.toHaveProperty('tokenHash');
    expect(result.body).not.toContain(sha256(VALID));
  });

  it('records the first successful load with one conditional update of openedAt alone', async () => {
    const result = await invoke(embedEvent({ token: FIRST }));
    expect(result.statusCode).toBe(200);
    expect(dynamoCalls()).toEqual([...OPENING_READS, `UpdateCommand ${SESSIONS_TABLE}`]);
    const update = ddb.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(update).toMatchObject({
      TableName: SESSIONS_TABLE,
      Key: { id: sessionIdOfToken(FIRST) },
      UpdateExpression: 'SET openedAt = :at',
      ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(openedAt)',
    });
  });

  it('opens a session at once whatever the token index shows: it is read by its id', async () => {
    ddb.on(QueryCommand, queryFor(VALID)).resolves({ Items: [] });
    const result = await invoke(embedEvent({ token: VALID }));
    expect(result.statusCode).toBe(200);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });
});

describe('embed-page handler: links bound to a browser', () => {
  const setCookie = (result: APIGatewayProxyResult) => String(result.headers?.['Set-Cookie'] ?? '');

  it('binds on the first load with one conditional update of the two binding attributes, and sets the cookie', async () => {
    const result = await invoke(embedEvent({ token: BINDS }));
    expect(result.statusCode).toBe(200);
    const cookie =
      /^__Host-embed_binding=([\w-]{43}); Path=\/; Max-Age=34560000; Secure; HttpOnly; SameSite=None; Partitioned$/.exec(
        setCookie(result),
      );
    expect(cookie).not.toBeNull();
    const secret = cookie?.[1] ?? '';
    // The binding's update, then the first opening's.
    expect(dynamoCalls()).toEqual([
      ...OPENING_READS,
      `UpdateCommand ${SESSIONS_TABLE}`,
      `UpdateCommand ${SESSIONS_TABLE}`,
    ]);
    const update = ddb.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(update).toMatchObject({
      TableName: SESSIONS_TABLE,
      Key: { id: sessionIdOfToken(BINDS) },
      UpdateExpression: 'SET bindingHash = :hash, boundAt = :at',
      ExpressionAttributeValues: { ':hash': sha256(`${sessionIdOfToken(BINDS)}:${secret}`), ':yes': true },
    });
    expect(update?.ConditionExpression).toContain('attribute_not_exists(bindingHash)');
    expect(JSON.stringify(update)).not.toContain(secret);
    expect(result.body).not.toContain(secret);
  });

  it('opens a bound session with its cookie, writes nothing and sets the cookie again', async () => {
    const result = await invoke(embedEvent({ token: BOUND }, { ...COOKIE, Accept: 'text/html' }));
    expect(result.statusCode).toBe(200);
    expect(setCookie(result)).toMatch(new RegExp(`^__Host-embed_binding=${SECRET};`));
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('refuses a bound session in another browser with 401 and no cookie', async () => {
    const result = await invoke(embedEvent({ token: BOUND }));
    expectHtmlError(result, 401, 'bound_to_another_browser');
    expect(result.body).toContain('data-embed-code="bound_to_another_browser"');
    expect(result.headers?.['Set-Cookie']).toBeUndefined();
    const json = await invoke(embedEvent({ token: BOUND }, JSON_ACCEPT));
    expect(JSON.parse(json.body)).toEqual({
      error: 'Unauthorized',
      message: 'This embed link was already opened in another browser',
    });
  });

  it('says "revoked" for a revoked bound session, even in the browser it is bound to', async () => {
    seedSession(BOUND, boundItem({ revokedAt: iso(Date.now() - 1000) }));
    for (const headers of [{ ...COOKIE, Accept: 'text/html' }, { Accept: 'text/html' }]) {
      const result = await invoke(embedEvent({ token: BOUND }, headers));
      expectHtmlError(result, 401, 'session_revoked');
      expect(result.headers?.['Set-Cookie']).toBeUndefined();
    }
  });

  it('sets no cookie and writes nothing for a session created without bindToBrowser, cookie or not', async () => {
    const result = await invoke(embedEvent({ token: VALID }, { ...COOKIE, Accept: 'text/html' }));
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Set-Cookie']).toBeUndefined();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('never logs the binding secret', async () => {
    await invoke(embedEvent({ token: BINDS }));
    await invoke(embedEvent({ token: BOUND }, { ...COOKIE, Accept: 'text/html' }));
    await invoke(
      embedEvent(
        { token: BOUND },
        { Cookie: '__Host-embed_binding=Other_Secret-0123456789abcdefghijklmnopq' },
      ),
    );
    expect(suite.logs()).not.toContain(SECRET);
    expect(suite.logs()).not.toContain('Other_Secret');
    expect(suite.logs()).not.toContain('embed_binding');
  });
});

describe('embed-page handler: who may frame it', () => {
  const frameAncestors = (result: APIGatewayProxyResult) =>
    /frame-ancestors ([^;]*)/.exec(String(result.headers?.['Content-Security-Policy']))?.[1];

  it('frames a session of a board with its own origins under those origins only', async () => {
    expect(frameAncestors(await invoke(embedEvent({ token: LISTED })))).toBe(BOARD_ORIGINS.join(' '));
  });

  it('frames a session of a board without a list under the stage’s default', async () => {
    expect(frameAncestors(await invoke(embedEvent({ token: VALID })))).toBe(DEFAULT_FRAME_ANCESTORS);
  });

  it('frames the refusal of a listed board’s expired session under the board’s origins', async () => {
    seedSession(LISTED, storedItem(LISTED, { boardId: 'board-acme', expiresAt: iso(Date.now() - 1000) }));
    const result = await invoke(embedEvent({ token: LISTED }));
    expect(result.statusCode).toBe(401);
    expect(frameAncestors(result)).toBe(BOARD_ORIGINS.join(' '));
  });

  it.each([
    ['no token', null],
    ['a malformed token', { token: 'nope' }],
  ])('frames the error page of %s under the stage’s default', async (_label, query) => {
    expect(frameAncestors(await invoke(embedEvent(query)))).toBe(DEFAULT_FRAME_ANCESTORS);
  });
});

describe('embed-page handler: theme and language', () => {
  it('renders the board in the theme and language the URL asks for', async () => {
    const result = await invoke(embedEvent({ token: VALID, theme: 'dark', locale: 'de-CH' }));
    expect(result.body).toContain('<html lang="de" data-theme="dark">');
    expect(result.body).toContain('Angemeldet als');
  });

  it('renders error pages in that language too', async () => {
    const result = await invoke(embedEvent({ token: EXPIRED, locale: 'fr' }));
    expect(result.statusCode).toBe(401);
    expect(result.body).toContain('<html lang="fr" data-theme="auto">');
    expect(result.body).toContain('Votre accès à ce tableau a pris fin.');
  });

  it.each([
    ['an unknown theme and language', { theme: 'neon', locale: 'pt-BR' }],
    ['malformed values', { theme: '"><script>alert(1)</script>', locale: '<img src=x onerror=alert(1)>' }],
  ])('ignores %s: English, automatic theme, 200, nothing reflected', async (_label, query) => {
    const result = await invoke(embedEvent({ token: VALID, ...query }));
    expect(result.statusCode).toBe(200);
    expect(result.body).toContain('<html lang="en" data-theme="auto">');
    expect(result.body).not.toContain('neon');
    expect(result.body).not.toContain('alert(1)');
  });
});

describe('embed-page handler: the view after an end', () => {
  it('answers GET /embed/ended with the view in the asked language and theme, touching no table', async () => {
    const result = await invoke(
      proxyEvent({
        method: 'GET',
        path: '/embed/ended',
        query: { reason: 'revoked', locale: 'es', theme: 'dark' },
        authorizer: null,
      }),
    );
    expect(result.statusCode).toBe(200);
    expectEmbedHeaders(result);
    expect(result.body).toContain('<html lang="es" data-theme="dark">');
    expect(result.body).toContain('data-embed-reason="revoked"');
    expect(result.body).toContain(TEXTS.es.notices.session_revoked.sentence);
    expect(ddb.calls()).toHaveLength(0);
  });
});

describe('embed-page handler: a warm environment keeps the board for a second, and nothing else', () => {
  const boardReads = () => dynamoCalls().filter((call) => call === `GetCommand ${BOARDS_TABLE}`).length;
  const boardName = (result: APIGatewayProxyResult) =>
    /data-testid="board-name">([^<]*)</.exec(result.body)?.[1];
  const renameBoard = (name: string) =>
    ddb.on(GetCommand, { TableName: BOARDS_TABLE, Key: { boardId: 'board-public' } }).resolves({
      Item: { boardId: 'board-public', orgId: 'org-a', visibility: 'PUBLIC', name },
    });

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });

  it('shows a board change within one second', async () => {
    expect(boardName(await invoke(embedEvent({ token: VALID })))).toBe('Product roadmap');
    renameBoard('Renamed');
    vi.advanceTimersByTime(999);
    expect(boardName(await invoke(embedEvent({ token: VALID })))).toBe('Product roadmap');
    vi.advanceTimersByTime(1);
    expect(boardName(await invoke(embedEvent({ token: VALID })))).toBe('Renamed');
  });

  it('reads a hot board once a second, however many loads it serves', async () => {
    // Five seconds of loads every 20 ms: 250 loads.
    for (let load = 0; load < 250; load += 1) {
      expect((await invoke(embedEvent({ token: VALID }))).statusCode).toBe(200);
      vi.advanceTimersByTime(20);
    }
    expect(boardReads()).toBe(5);
    // The session and its cut-off records, on every load.
    expect(dynamoCalls().filter((call) => call === `GetCommand ${SESSIONS_TABLE}`)).toHaveLength(250);
    expect(dynamoCalls().filter((call) => call === `BatchGetCommand ${SESSIONS_TABLE}`)).toHaveLength(250);
  });

  it('refuses a session revoked a moment ago at once, while it keeps the board', async () => {
    expect((await invoke(embedEvent({ token: VALID }))).statusCode).toBe(200);
    seedSession(VALID, storedItem(VALID, { revokedAt: iso(Date.now()), revokedByUserId: 'owner-1' }));
    const result = await invoke(embedEvent({ token: VALID }));
    expectHtmlError(result, 401, 'session_revoked');
    expect(boardReads()).toBe(1);
  });

  it('sees a board deleted a moment ago within one second', async () => {
    expect((await invoke(embedEvent({ token: VALID }))).statusCode).toBe(200);
    ddb.on(GetCommand, { TableName: BOARDS_TABLE, Key: { boardId: 'board-public' } }).resolves({});
    vi.advanceTimersByTime(1_000);
    expectHtmlError(await invoke(embedEvent({ token: VALID })), 404, 'board_gone');
  });
});

describe('embed-page handler: an unusable token', () => {
  it.each([
    ['no query string', null],
    ['no token parameter', { other: 'x' }],
    ['an empty token', { token: '' }],
  ])('answers 400 for %s without touching DynamoDB', async (_label, query) => {
    const result = await invoke(embedEvent(query));
    expectHtmlError(result, 400, 'missing_token');
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([
    ['too short', 'abc'],
    ['33 characters', `${VALID}x`],
    ['31 characters', VALID.slice(1)],
    ['a character outside base64url', `${VALID.slice(0, 31)}+`],
    ['padding', `${VALID.slice(0, 31)}=`],
    ['a slash', `${VALID.slice(0, 31)}/`],
    ['a space', `${VALID.slice(0, 31)} `],
  ])('answers 401 for a malformed token (%s) with zero DynamoDB calls', async (_label, token) => {
    const result = await invoke(embedEvent({ token }));
    expectHtmlError(result, 401, 'invalid_token');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 401 for an unknown token after one read by id and one index query, waiting for nothing', async () => {
    const result = await invoke(embedEvent({ token: UNKNOWN }));
    expectHtmlError(result, 401, 'invalid_token');
    expect(dynamoCalls()).toEqual([`GetCommand ${SESSIONS_TABLE}`, `QueryCommand ${SESSIONS_TABLE}`]);
  });

  it('answers 401 with the expired page once expiresAt has passed', async () => {
    const result = await invoke(embedEvent({ token: EXPIRED }));
    expectHtmlError(result, 401, 'session_expired');
    expect(result.body).toContain('Reload the page to open the board again.');
  });

  it('answers 401 with the revoked page for a revoked session', async () => {
    const result = await invoke(embedEvent({ token: REVOKED }));
    expectHtmlError(result, 401, 'session_revoked');
  });

  it('answers 404 when the session’s board no longer exists', async () => {
    const result = await invoke(embedEvent({ token: ORPHAN }));
    expectHtmlError(result, 404, 'board_gone');
  });

  it.each([
    ['a missing token', null, 400, 'Bad Request'],
    ['a malformed token', { token: 'nope' }, 401, 'Unauthorized'],
    ['an expired token', { token: EXPIRED }, 401, 'Unauthorized'],
    ['a revoked token', { token: REVOKED }, 401, 'Unauthorized'],
    ['a board that is gone', { token: ORPHAN }, 404, 'Not Found'],
  ])(
    'answers {error, message} JSON for %s when Accept is application/json',
    async (_l, query, status, error) => {
      const result = await invoke(embedEvent(query, JSON_ACCEPT));
      expect(result.statusCode).toBe(status);
      expect(result.headers?.['Content-Type']).toBe('application/json');
      expectEmbedHeaders(result);
      const body = JSON.parse(result.body) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['error', 'message']);
      expect(body.error).toBe(error);
    },
  );
});

describe('embed-page handler: DynamoDB failures', () => {
  it('answers a 503 page with Retry-After when the session read is throttled', async () => {
    ddb.on(GetCommand, { TableName: SESSIONS_TABLE }).rejects(dynamoErrors.throttled());
    const result = await invoke(embedEvent({ token: VALID }));
    expectHtmlError(result, 503, 'unavailable');
    expect(result.headers?.['Retry-After']).toBe('2');
  });

  it('answers a 503 with Retry-After when the board read fails, and JSON when asked for', async () => {
    ddb.on(GetCommand).rejects(dynamoErrors.internal());
    const result = await invoke(embedEvent({ token: VALID }, JSON_ACCEPT));
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('2');
    expect(JSON.parse(result.body)).toMatchObject({ error: 'Service Unavailable' });
  });

  it('answers a 500 page that shows no internals for an unexpected error, and logs it with the request id', async () => {
    ddb.on(GetCommand, { TableName: SESSIONS_TABLE }).rejects(dynamoErrors.validation());
    const result = await invoke(embedEvent({ token: VALID }), 'req-500');
    expectHtmlError(result, 500, 'internal');
    expect(result.body).toContain('Something went wrong');
    for (const internal of ['ValidationException', 'internal detail', 'parameter values', 'node_modules']) {
      expect(result.body).not.toContain(internal);
    }
    expect(result.body).not.toMatch(/\bat .*:\d+:\d+/);
    const errorLine = suite
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.level === 'error');
    expect(errorLine).toMatchObject({
      requestId: 'req-500',
      function: 'embed-page',
      errorName: 'ValidationException',
    });
  });
});

describe('embed-page handler: logs', () => {
  it('never contain the token nor its query string, whatever the outcome', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const requests: Array<[Record<string, string> | null, Record<string, string>?]> = [
      [{ token: VALID }],
      [{ token: VALID }, JSON_ACCEPT],
      [{ token: EXPIRED }],
      [{ token: ORPHAN }],
      [{ token: UNKNOWN }],
      [{ token: `${VALID}x` }],
    ];
    for (const [query, headers] of requests) {
      const pending = invoke(embedEvent(query, headers));
      await vi.advanceTimersByTimeAsync(1000);
      await pending;
    }
    ddb.on(QueryCommand).rejects(dynamoErrors.throttled());
    await invoke(embedEvent({ token: VALID }));
    ddb.on(QueryCommand).rejects(dynamoErrors.validation());
    await invoke(embedEvent({ token: VALID }));

    const logs = suite.logs();
    expect(logs).toContain('"level"');
    for (const secret of [VALID, EXPIRED, ORPHAN, UNKNOWN, 'token=']) expect(logs).not.toContain(secret);
    // Every line is one JSON document.
    for (const line of logs.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });
});

describe('embed-page handler: configuration', () => {
  beforeEach(() => {
    vi.unstubAllEnvs();
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  it('sets frame-ancestors from EMBED_FRAME_ANCESTORS on pages and error pages', async () => {
    const sources = "https://app.example.com 'self'";
    const configured = await loadEmbedPage({ EMBED_FRAME_ANCESTORS: sources });
    expectEmbedHeaders(await configured(embedEvent({ token: VALID }), lambdaContext()), sources);
    expectEmbedHeaders(await configured(embedEvent(null), lambdaContext()), sources);
  });

  it.each([
    ['an invalid frame ancestor', { EMBED_FRAME_ANCESTORS: '*' }, 'EMBED_FRAME_ANCESTORS'],
    ['a missing sessions table', { SESSIONS_TABLE: '' }, 'SESSIONS_TABLE'],
    ['a missing boards table', { BOARDS_TABLE: '' }, 'BOARDS_TABLE'],
  ])('refuses to load with a ConfigError for %s', async (_label, env, name) => {
    // A fresh module graph has its own ConfigError class, so compare by name.
    const error = await loadEmbedPage(env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe(ConfigError.name);
    expect((error as Error).message).toContain(name);
  });
});

describe('embed-page handler: HEAD', () => {
  const head = (query: Record<string, string> | null) => ({ ...embedEvent(query), httpMethod: 'HEAD' });

  it('answers as GET would, with the same headers and no body', async () => {
    const got = await invoke(embedEvent({ token: VALID }));
    const result = await invoke(head({ token: VALID }));
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe('');
    expect(result.headers).toEqual(got.headers);
  });

  it('drops the body of an error answer too', async () => {
    const result = await invoke(head({ token: UNKNOWN }));
    expect(result.statusCode).toBe(401);
    expect(result.body).toBe('');
    expectEmbedHeaders(result);
  });

  it('never binds a link nor sets a cookie', async () => {
    const result = await invoke(head({ token: BINDS }));
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Set-Cookie']).toBeUndefined();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});
