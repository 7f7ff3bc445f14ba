import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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
import { invokeWithRequestId } from '#test/support/invoke';

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

const dynamoCalls = () => recordedCalls(ddb);

const suite = handlerSuite({ mock: ddb, load: loadCreateSession, seed: seedTables, coldPerTest: true });

const invoke = (event: APIGatewayProxyEvent, requestId = 'lambda-request-id') =>
  invokeWithRequestId(suite.handler(), event, requestId);

/**
 * The handler's wiring only: what API Gateway hands it (body encodings, the authorizer's context, the
 * domain and stage), the DynamoDB calls its adapters make, and how its middlewares map each failure to a
 * status and headers. The rules of creating a session are tested once on the use case
 * (test/unit/lib/use-cases/create-session.test.ts) and once over HTTP (test/integration/create-session.test.ts).
 */
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
    expect(body.sessionToken).toBe(session.token);
    expect(body.embedUrl).toBe(`https://${API_DOMAIN}/prod/embed?token=${session.token}`);
  });

  it('uses exactly 3 DynamoDB calls for a public board: the board, the membership that decides the tenant, one conditional put', async () => {
    await invoke(post(validBody()));
    expect(dynamoCalls()).toEqual([
      `GetCommand ${BOARDS_TABLE}`,
      `GetCommand ${MEMBERSHIPS_TABLE}`,
      `PutCommand ${SESSIONS_TABLE}`,
    ]);
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

  it('accepts a base64-encoded body', async () => {
    const event = post('');
    event.body = Buffer.from(JSON.stringify(validBody())).toString('base64');
    event.isBase64Encoded = true;
    expect((await invoke(event)).statusCode).toBe(201);
  });
});

describe('create-session handler: a warm environment keeps the board and membership for a second', () => {
  const reads = (table: string) => dynamoCalls().filter((call) => call === `GetCommand ${table}`).length;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('stops honouring a removed membership within one second', async () => {
    const privateBoard = post(validBody({ boardId: 'board-private' }));
    expect((await invoke(privateBoard)).statusCode).toBe(201);
    ddb
      .on(GetCommand, { TableName: MEMBERSHIPS_TABLE, Key: { orgId: 'org-a', userId: OWNER.userId } })
      .resolves({});
    vi.advanceTimersByTime(999);
    expect((await invoke(privateBoard)).statusCode).toBe(201);
    vi.advanceTimersByTime(1);
    expectJsonError(await invoke(privateBoard), 403, 'Forbidden');
  });

  it('reads a hot board and its creator’s membership once a second, and writes every session', async () => {
    // Three seconds of creates every 30 ms: 100 creates.
    for (let create = 0; create < 100; create += 1) {
      expect((await invoke(post(validBody()))).statusCode).toBe(201);
      vi.advanceTimersByTime(30);
    }
    expect(reads(BOARDS_TABLE)).toBe(3);
    expect(reads(MEMBERSHIPS_TABLE)).toBe(3);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(100);
  });

  it('keeps each board’s organization apart: another organization’s private board stays refused', async () => {
    expect((await invoke(post(validBody({ boardId: 'board-private' })))).statusCode).toBe(201);
    expectJsonError(await invoke(post(validBody({ boardId: 'board-other-org' }))), 403, 'Forbidden');
    expect(ddb.commandCalls(GetCommand).map((call) => call.args[0].input.Key)).toEqual([
      { boardId: 'board-private' },
      { orgId: 'org-a', userId: OWNER.userId },
      { boardId: 'board-other-org' },
      { orgId: 'org-b', userId: OWNER.userId },
    ]);
  });
});

describe('create-session handler: errors as JSON {error, message} with no-store', () => {
  it('answers 415 for a body that is not declared as JSON, touching no table', async () => {
    const message = expectJsonError(
      await invoke(post(validBody(), { 'Content-Type': 'text/plain' })),
      415,
      'Unsupported Media Type',
    );
    expect(message).toMatch(/application\/json/);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 (not 422) for malformed JSON', async () => {
    expectJsonError(await invoke(post('{"boardId":')), 400, 'Bad Request');
  });

  it('answers 400 naming the field for a failed validation, touching no table', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ email: 'not-an-email' }))),
      400,
      'Bad Request',
    );
    expect(message).toMatch(/email/);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 for the use case’s refusal of a lifetime past year 9999', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ expiresInSeconds: 400_000_000_000 }))),
      400,
      'Bad Request',
    );
    expect(message).toMatch(/expiresInSeconds is too large/);
  });

  it('answers 413 for a body over the configured limit, touching no table', async () => {
    const huge = validBody({ metadata: { blob: 'x'.repeat(OVERSIZED) } });
    expectJsonError(await invoke(post(huge)), 413, 'Payload Too Large');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 404 for the use case’s unknown board', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ boardId: 'no-such-board' }))),
      404,
      'Not Found',
    );
    expect(message).toMatch(/not found/);
  });

  it('answers 403 for the use case’s refusal of another organization’s private board', async () => {
    const message = expectJsonError(
      await invoke(post(validBody({ boardId: 'board-other-org' }))),
      403,
      'Forbidden',
    );
    expect(message).toBe(
      'Sessions can only be created for public boards or boards owned by your organization',
    );
  });

  it('answers 503 with Retry-After when DynamoDB throttles, and writes no session', async () => {
    ddb.on(GetCommand, { TableName: BOARDS_TABLE }).rejects(dynamoErrors.throttled());
    const result = await invoke(post(validBody()));
    expectJsonError(result, 503, 'Service Unavailable');
    expect(Number(result.headers?.['Retry-After'])).toBeGreaterThan(0);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('answers 503 with Retry-After when DynamoDB cannot be reached', async () => {
    ddb.on(GetCommand).rejects(dynamoErrors.connectionRefused());
    const result = await invoke(post(validBody()));
    expectJsonError(result, 503, 'Service Unavailable');
    expect(Number(result.headers?.['Retry-After'])).toBeGreaterThan(0);
  });

  it('answers 500 without internals for an unexpected DynamoDB error', async () => {
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
