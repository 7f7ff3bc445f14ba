import { createHash } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, readCreateSessionConfig } from '#lib/platform/config';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { API_DOMAIN, KEY_OWNER, lambdaContext, proxyEvent } from '#test/support/events';
import { keysOf, OMITTED_OPTIONALS, SESSION_FIELDS, sorted, validBody } from '#test/support/fixtures';
import {
  expectJsonError,
  handlerSuite,
  LAMBDA_ENVIRONMENT,
  loadHandler,
  parseBody,
  dynamoCalls as recordedCalls,
} from '#test/support/harness';

// The document client is created when the handler module loads, so the mock must exist first.
const ddb = mockClient(DynamoDBDocumentClient);

const loadCreateSession = (env: Record<string, string> = {}) =>
  loadHandler(() => import('#functions/create-session'), env);

const API_KEY = `esk_${'k'.repeat(43)}`;
const OWNER = KEY_OWNER;
const BOARDS_TABLE = 'test-boards';
const MEMBERSHIPS_TABLE = 'test-memberships';
const SESSIONS_TABLE = 'test-sessions';

/** One byte more than the handler reads, under the test environment's configuration. */
const OVERSIZED = readCreateSessionConfig({ ...process.env, ...LAMBDA_ENVIRONMENT }).maxBodyBytes + 1;

const JSON_HEADERS = { 'Content-Type': 'application/json', Authorization: `Bearer ${API_KEY}` };

function seedTables() {
  ddb.on(GetCommand).resolves({});
  ddb
    .on(GetCommand, { TableName: BOARDS_TABLE, Key: { boardId: 'board-public' } })
    .resolves({ Item: { boardId: 'board-public', orgId: 'org-a', visibility: 'PUBLIC', name: 'Public' } });
  ddb
    .on(GetCommand, { TableName: BOARDS_TABLE, Key: { boardId: 'board-private' } })
    .resolves({ Item: { boardId: 'board-private', orgId: 'org-a', visibility: 'PRIVATE', name: 'Private' } });
  ddb
    .on(GetCommand, { TableName: BOARDS_TABLE, Key: { boardId: 'board-other-org' } })
    .resolves({ Item: { boardId: 'board-other-org', orgId: 'org-b', visibility: 'PRIVATE', name: 'Other' } });
  ddb
    .on(GetCommand, { TableName: MEMBERSHIPS_TABLE, Key: { orgId: 'org-a', userId: OWNER.userId } })
    .resolves({ Item: { orgId: 'org-a' } });
  ddb.on(PutCommand).resolves({});
}

/** A create-session request as API Gateway passes it after the authorizer allowed it. */
const post = (body: unknown, headers: Record<string, string> = JSON_HEADERS) =>
  proxyEvent({
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers,
    authorizer: { ...OWNER },
  });

const parse = parseBody;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

const dynamoCalls = () => recordedCalls(ddb);

const suite = handlerSuite({ mock: ddb, load: loadCreateSession, seed: seedTables });

/** Invokes with `requestId` as API Gateway's request id, the one logs and X-Request-Id carry. */
const invoke = (event: APIGatewayProxyEvent, requestId = 'lambda-request-id') =>
  suite.handler()(
    { ...event, requestContext: { ...event.requestContext, requestId } },
    lambdaContext('lambda-invocation-id'),
  );

describe('create-session handler: success', () => {
  it('answers 201 with {session, sessionToken, embedUrl} and headers that forbid caching', async () => {
    const result = await invoke(post(validBody()));
    expect(result.statusCode).toBe(201);
    expect(result.headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    const body = parse(result);
    expect(Object.keys(body).sort()).toEqual(['embedUrl', 'session', 'sessionToken']);
    const session = body.session as Record<string, unknown>;
    expect(keysOf(session)).toEqual(sorted(SESSION_FIELDS));
    expect(session).toMatchObject({
      boardId: 'board-public',
      userId: 'customer-42',
      email: 'ada@example.com',
      ...OMITTED_OPTIONALS,
    });
    expect(session.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(body.sessionToken).toBe(session.token);
    expect(body.embedUrl).toBe(`https://${API_DOMAIN}/prod/embed?token=${session.token}`);
  });

  it('sets expiresAt 30 days after createdAt by default, both ISO 8601 with milliseconds', async () => {
    const before = Date.now();
    const session = parse(await invoke(post(validBody()))).session as Record<string, string>;
    const createdAt = Date.parse(session.createdAt ?? '');
    expect(session.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(session.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(createdAt).toBeGreaterThanOrEqual(before);
    expect(createdAt).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(session.expiresAt ?? '') - createdAt).toBe(2_592_000_000);
  });

  it('honours expiresInSeconds', async () => {
    const session = parse(await invoke(post(validBody({ expiresInSeconds: 60 })))).session as Record<
      string,
      string
    >;
    expect(Date.parse(session.expiresAt ?? '') - Date.parse(session.createdAt ?? '')).toBe(60_000);
  });

  it('uses exactly 2 DynamoDB calls for a public board: the board read and one conditional put', async () => {
    await invoke(post(validBody()));
    expect(dynamoCalls()).toEqual([`GetCommand ${BOARDS_TABLE}`, `PutCommand ${SESSIONS_TABLE}`]);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.ConditionExpression).toBe(
      'attribute_not_exists(id)',
    );
  });

  it('uses exactly 3 DynamoDB calls for a private board of the key owner’s organization', async () => {
    const result = await invoke(post(validBody({ boardId: 'board-private' })));
    expect(result.statusCode).toBe(201);
    expect(dynamoCalls()).toEqual([
      `GetCommand ${BOARDS_TABLE}`,
      `GetCommand ${MEMBERSHIPS_TABLE}`,
      `PutCommand ${SESSIONS_TABLE}`,
    ]);
  });

  it('stores the SHA-256 of the token and a TTL, never the token', async () => {
    const { sessionToken } = parse(await invoke(post(validBody()))) as { sessionToken: string };
    const item = ddb.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    expect(item.tokenHash).toBe(sha256(sessionToken));
    expect(item).not.toHaveProperty('token');
    expect(JSON.stringify(item)).not.toContain(sessionToken);
    expect(item.ttl).toBe(Math.ceil(Date.parse(item.expiresAt as string) / 1000));
  });

  it('gives every session its own token and id', async () => {
    const first = parse(await invoke(post(validBody()))) as { sessionToken: string; session: { id: string } };
    const second = parse(await invoke(post(validBody()))) as {
      sessionToken: string;
      session: { id: string };
    };
    expect(first.sessionToken).not.toBe(second.sessionToken);
    expect(first.session.id).not.toBe(second.session.id);
  });

  it('builds embedUrl from API Gateway’s domain name and stage, ignoring the Host header', async () => {
    const event = post(validBody(), {
      ...JSON_HEADERS,
      Host: 'evil.example',
      'X-Forwarded-Host': 'evil.example',
    });
    event.requestContext.domainName = 'api.customer-domain.example';
    event.requestContext.stage = 'v2';
    const { embedUrl, sessionToken } = parse(await invoke(event)) as {
      embedUrl: string;
      sessionToken: string;
    };
    expect(embedUrl).toBe(`https://api.customer-domain.example/v2/embed?token=${sessionToken}`);
  });

  it('returns "__proto__" and "constructor" metadata keys as sent, without polluting prototypes', async () => {
    const raw =
      '{"boardId":"board-public","userId":"u","email":"a@b.co","metadata":{"__proto__":{"admin":true},"constructor":{"x":1}}}';
    const result = await invoke(post(raw));
    expect(result.statusCode).toBe(201);
    expect(result.body).toContain('"metadata":{"__proto__":{"admin":true},"constructor":{"x":1}}');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('accepts a base64-encoded body', async () => {
    const event = post('');
    event.body = Buffer.from(JSON.stringify(validBody())).toString('base64');
    event.isBase64Encoded = true;
    expect((await invoke(event)).statusCode).toBe(201);
  });
});

describe('create-session handler: errors', () => {
  it('answers 415 JSON for a body that is not declared as JSON, touching no table', async () => {
    const message = expectJsonError(
      await invoke(post(validBody(), { 'Content-Type': 'text/plain' })),
      415,
      'Unsupported Media Type',
    );
    expect(message).toMatch(/application\/json/);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 JSON (not 422) for malformed JSON', async () => {
    expectJsonError(await invoke(post('{"boardId":')), 400, 'Bad Request');
  });

  it('answers 400 JSON naming the field for a failed validation, touching no table', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ email: 'not-an-email' }))),
      400,
      'Bad Request',
    );
    expect(message).toMatch(/email/);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 for an expiresInSeconds past year 9999 before reading any board', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ expiresInSeconds: 400_000_000_000 }))),
      400,
      'Bad Request',
    );
    expect(message).toMatch(/expiresInSeconds is too large/);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 404 JSON for an unknown board, with one DynamoDB call and no membership check', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ boardId: 'no-such-board' }))),
      404,
      'Not Found',
    );
    expect(message).toMatch(/not found/);
    expect(dynamoCalls()).toEqual([`GetCommand ${BOARDS_TABLE}`]);
  });

  it('answers 403 JSON for a private board of another organization and stores nothing', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ boardId: 'board-other-org' }))),
      403,
      'Forbidden',
    );
    expect(message).toBe(
      'Sessions can only be created for public boards or boards owned by your organization',
    );
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('answers 413 JSON for a body over the configured limit', async () => {
    const huge = validBody({ metadata: { blob: 'x'.repeat(OVERSIZED) } });
    expectJsonError(await invoke(post(huge)), 413, 'Payload Too Large');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 for metadata over 32 KiB in a body within the limit', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ metadata: { blob: 'x'.repeat(33 * 1024) } }))),
      400,
      'Bad Request',
    );
    expect(message).toMatch(/^metadata must be at most 32768 bytes/);
  });

  it('answers 400, not 500, for metadata nested thousands of levels deep', async () => {
    const raw = `{"boardId":"board-public","userId":"u","email":"a@b.co","metadata":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
    const message = expectJsonError(await invoke(post(raw)), 400, 'Bad Request');
    expect(message).toBe('metadata must be nested at most 32 levels deep');
  });

  it('answers 503 JSON with Retry-After when DynamoDB throttles, and writes no session', async () => {
    ddb.on(GetCommand, { TableName: BOARDS_TABLE }).rejects(dynamoErrors.throttled());
    const result = await invoke(post(validBody()));
    expectJsonError(result, 503, 'Service Unavailable');
    expect(Number(result.headers?.['Retry-After'])).toBeGreaterThan(0);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('answers 503 when the session write itself is throttled', async () => {
    ddb.on(PutCommand).rejects(dynamoErrors.throttled());
    const result = await invoke(post(validBody()));
    expectJsonError(result, 503, 'Service Unavailable');
    expect(result.headers?.['Retry-After']).toBeDefined();
  });

  it('answers 503 when DynamoDB cannot be reached', async () => {
    ddb.on(GetCommand).rejects(dynamoErrors.connectionRefused());
    expectJsonError(await invoke(post(validBody())), 503, 'Service Unavailable');
  });

  it('answers 500 JSON without internals for an unexpected DynamoDB error', async () => {
    ddb.on(PutCommand).rejects(dynamoErrors.validation());
    const result = await invoke(post(validBody()));
    const message = expectJsonError(result, 500, 'Internal Server Error');
    expect(message).toBe('An unexpected error occurred');
    expect(result.body).not.toContain('internal detail');
    expect(result.body).not.toContain('ValidationException');
  });

  it('answers 500 and touches no table when the route has no authorizer context', async () => {
    const event = post(validBody());
    event.requestContext.authorizer = null;
    expectJsonError(await invoke(event), 500, 'Internal Server Error');
    expect(ddb.calls()).toHaveLength(0);
  });
});

describe('create-session handler: order of checks', () => {
  it('checks the media type (415) before the body (400)', async () => {
    const result = await invoke(post('{"boardId":', { 'Content-Type': 'text/plain' }));
    expect(result.statusCode).toBe(415);
  });

  it('checks the size (413) before the media type (415)', async () => {
    const result = await invoke(post('x'.repeat(OVERSIZED), { 'Content-Type': 'text/plain' }));
    expect(result.statusCode).toBe(413);
  });

  it('checks the body (400) before the board exists (404)', async () => {
    const result = await invoke(post(validBody({ boardId: 'no-such-board', email: 'bad' })));
    expect(result.statusCode).toBe(400);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('checks the board exists (404) before access to it (403)', async () => {
    ddb.on(GetCommand, { TableName: MEMBERSHIPS_TABLE }).resolves({});
    const result = await invoke(post(validBody({ boardId: 'no-such-board' })));
    expect(result.statusCode).toBe(404);
    expect(ddb.commandCalls(GetCommand, { TableName: MEMBERSHIPS_TABLE })).toHaveLength(0);
  });
});

describe('create-session handler: logs', () => {
  it('never contain the session token, the API key or the body’s e-mail, but carry the request id', async () => {
    const email = 'very.secret.person@example.com';
    const created = parse(await invoke(post(validBody({ email })), 'req-ok'));
    await invoke(post(validBody({ email, boardId: 'no-such-board' })), 'req-404');
    await invoke(post(validBody({ email, boardId: 'board-other-org' })), 'req-403');
    await invoke(post(validBody({ email: `${email}x`, expiresInSeconds: 'soon' })), 'req-400');
    ddb.on(PutCommand).rejects(dynamoErrors.validation());
    await invoke(post(validBody({ email })), 'req-500');
    ddb.on(GetCommand).rejects(dynamoErrors.throttled());
    await invoke(post(validBody({ email })), 'req-503');

    const token = created.sessionToken as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const text = suite.logs();
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(text).not.toContain(token);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(API_KEY.slice(4, 24));
    expect(text).not.toContain(email);
    expect(lines.map((l) => l.requestId)).toEqual(
      expect.arrayContaining(['req-404', 'req-403', 'req-400', 'req-500', 'req-503']),
    );
    expect(lines.find((l) => l.requestId === 'req-500')).toMatchObject({ level: 'error' });
  });
});

describe('create-session handler: configuration', () => {
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  it('uses PUBLIC_BASE_URL, without its trailing slash, for embedUrl when it is set', async () => {
    const configured = await loadCreateSession({ PUBLIC_BASE_URL: 'https://embed.example.com/' });
    const event = post(validBody(), { ...JSON_HEADERS, Host: 'evil.example' });
    const { embedUrl, sessionToken } = parse(await configured(event, lambdaContext())) as {
      embedUrl: string;
      sessionToken: string;
    };
    expect(embedUrl).toBe(`https://embed.example.com/embed?token=${sessionToken}`);
  });

  it('applies a configured METADATA_MAX_BYTES to metadata and to the body limit', async () => {
    const configured = await loadCreateSession({ PUBLIC_BASE_URL: '', METADATA_MAX_BYTES: '100' });
    const small = await configured(post(validBody({ metadata: { s: 'x'.repeat(80) } })), lambdaContext());
    expect(small.statusCode).toBe(201);
    const over = await configured(post(validBody({ metadata: { s: 'x'.repeat(100) } })), lambdaContext());
    expect(over.statusCode).toBe(400);
    expect(parse(over).message).toMatch(/^metadata must be at most 100 bytes/);
    const huge = await configured(
      post(validBody({ metadata: { s: 'x'.repeat(17 * 1024) } })),
      lambdaContext(),
    );
    expect(huge.statusCode).toBe(413);
  });

  it('refuses to load with a ConfigError when a table name is missing', async () => {
    // A fresh module graph has its own ConfigError class, so compare by name.
    const error = await loadCreateSession({ SESSIONS_TABLE: '' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe(ConfigError.name);
    expect((error as Error).message).toContain('SESSIONS_TABLE');
  });
});

describe('create-session handler: an Idempotency-Key', () => {
  const keyed = () => post(validBody(), { ...JSON_HEADERS, 'Idempotency-Key': 'order-1' });
  const puts = () => ddb.commandCalls(PutCommand).map((call) => call.args[0].input);

  it('holds the key no longer than the request budget, and fixes the session it writes with the claim', async () => {
    const before = Date.now();
    const result = await invoke(keyed());
    const after = Date.now();
    expect(result.statusCode).toBe(201);
    const [claim, session] = puts();
    // The lease ends with the request's budget (5 s from its start, somewhere between before and after).
    const leaseEnd = Number(claim?.Item?.lockedUntilMs);
    expect(leaseEnd).toBeGreaterThan(before);
    expect(leaseEnd).toBeLessThanOrEqual(after + 5_000);
    expect(claim?.Item?.attemptId).toEqual(expect.any(String));
    // The reservation (session id and token) is sealed: neither is in the record in clear.
    const body = parse(result) as { session: { id: string }; sessionToken: string };
    expect(session?.Item?.id).toBe(body.session.id);
    expect(JSON.stringify(claim)).not.toContain(body.sessionToken);
    expect(JSON.stringify(claim)).not.toContain(body.session.id);
    expect(String(claim?.Item?.reservation)).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});
