import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { createApiKey, RECORD_ONLY_THROTTLING } from '#lib/use-cases/admin';
import type { LocalRuntime } from '#local/runtime';
import { keysOf, OMITTED_OPTIONALS, SESSION_FIELDS, sorted, validBody } from '#test/support/fixtures';
import { adminEnv, call, createSessionCall, publicBaseUrl, testTarget } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

const runtime = useTestRuntime();
let demo: NonNullable<LocalRuntime['demo']>;
beforeAll(() => {
  demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
});

const valid = () => validBody({ boardId: demo.publicBoardId });

async function scan(table: string): Promise<Record<string, unknown>[]> {
  const client = new DynamoDBClient({
    endpoint: runtime.dynamoEndpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const { Items } = await DynamoDBDocumentClient.from(client).send(new ScanCommand({ TableName: table }));
    return Items ?? [];
  } finally {
    client.destroy();
  }
}

function expectJsonError(
  result: { status: number; headers: Headers; body: Record<string, unknown> },
  status: number,
  error: string,
) {
  expect(result.status).toBe(status);
  expect(result.headers.get('content-type')).toMatch(/^application\/json/);
  expect(result.body.error).toBe(error);
  expect(typeof result.body.message).toBe('string');
  expect(Object.keys(result.body).sort()).toEqual(['error', 'message']);
}

describe('POST /api/embed/sessions: success', () => {
  it('returns 201 with session, sessionToken and embedUrl carrying the same token', async () => {
    const result = await createSessionCall(runtime, valid());
    expect(result.status).toBe(201);
    const session = result.body.session as Record<string, unknown>;
    expect(Object.keys(result.body).sort()).toEqual(['embedUrl', 'session', 'sessionToken']);
    expect(session.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(result.body.sessionToken).toBe(session.token);
    expect(result.body.embedUrl).toBe(`${publicBaseUrl(runtime)}/embed?token=${session.token}`);
    expect(new URL(result.body.embedUrl as string).searchParams.get('token')).toBe(session.token);
  });

  it('sends JSON that no browser or proxy may store', async () => {
    const result = await createSessionCall(runtime, valid());
    expect(result.headers.get('content-type')).toBe('application/json');
    expect(result.headers.get('cache-control')).toBe('no-store');
  });

  it('returns every session field, with omitted optionals as null and metadata as {}', async () => {
    const { body } = await createSessionCall(runtime, valid());
    const session = body.session as Record<string, unknown>;
    expect(keysOf(session)).toEqual(sorted(SESSION_FIELDS));
    expect(session).toMatchObject({
      boardId: demo.publicBoardId,
      userId: 'customer-42',
      email: 'ada@example.com',
      ...OMITTED_OPTIONALS,
    });
  });

  it('treats explicit nulls like omitted optional fields', async () => {
    const { status, body } = await createSessionCall(runtime, {
      ...valid(),
      firstName: null,
      lastName: null,
      avatarUrl: null,
      plan: null,
      metadata: null,
      expiresInSeconds: null,
    });
    expect(status).toBe(201);
    expect(body.session).toMatchObject(OMITTED_OPTIONALS);
  });

  it('echoes every optional field it was given', async () => {
    const optional = {
      firstName: 'Ada',
      lastName: 'Lovelace',
      avatarUrl: 'https://cdn.example.com/ada.png',
      plan: 'enterprise',
      metadata: { team: 'analytics', seats: 12, tags: ['a', 'b'], nested: { deep: true } },
    };
    const { status, body } = await createSessionCall(runtime, { ...valid(), ...optional });
    expect(status).toBe(201);
    expect(body.session).toMatchObject(optional);
  });

  it('sets expiresAt to createdAt plus the 30-day default, both ISO 8601 UTC with milliseconds', async () => {
    const { body } = await createSessionCall(runtime, valid());
    const session = body.session as { createdAt: string; expiresAt: string };
    expect(session.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(session.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(2_592_000_000);
  });

  it('honours expiresInSeconds down to one second', async () => {
    const { body } = await createSessionCall(runtime, { ...valid(), expiresInSeconds: 1 });
    const session = body.session as { createdAt: string; expiresAt: string };
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(1000);
  });

  it('allows several sessions for the same board and the same user on other boards', async () => {
    const first = await createSessionCall(runtime, valid());
    const second = await createSessionCall(runtime, valid());
    const otherBoard = await createSessionCall(runtime, { ...valid(), boardId: demo.privateBoardId });
    expect([first.status, second.status, otherBoard.status]).toEqual([201, 201, 201]);
    const ids = [first, second, otherBoard].map((r) => (r.body.session as { id: string }).id);
    expect(new Set(ids).size).toBe(3);
  });

  it('gives 50 parallel creates 50 distinct tokens and ids', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => createSessionCall(runtime, valid())));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const tokens = new Set(results.map((r) => r.body.sessionToken));
    const ids = new Set(results.map((r) => (r.body.session as { id: string }).id));
    expect(tokens.size).toBe(50);
    expect(ids.size).toBe(50);
  });

  it('creates a session on a private board of the key owner’s organization', async () => {
    const result = await createSessionCall(runtime, { ...valid(), boardId: demo.privateBoardId });
    expect(result.status).toBe(201);
  });
});

describe('POST /api/embed/sessions: what is stored', () => {
  it('stores only the SHA-256 of the token, with a TTL from expiresAt', async () => {
    const { body } = await createSessionCall(runtime, { ...valid(), expiresInSeconds: 3600 });
    const token = body.sessionToken as string;
    const session = body.session as { id: string; expiresAt: string };
    const items = await scan(runtime.tables.sessions);
    const item = items.find((i) => i.id === session.id);
    expect(item).toBeDefined();
    expect(item?.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(item?.ttl).toBe(Math.ceil(Date.parse(session.expiresAt) / 1000));
    expect(JSON.stringify(items)).not.toContain(token);
  });

  it('stores metadata exactly as it was sent', async () => {
    const metadata = {
      team: 'analytics',
      seats: 12,
      ratio: 0.25,
      tags: ['a', 'b'],
      nested: { deep: [null, true] },
    };
    const { body } = await createSessionCall(runtime, { ...valid(), metadata });
    const item = (await scan(runtime.tables.sessions)).find(
      (i) => i.id === (body.session as { id: string }).id,
    );
    expect(JSON.parse(item?.metadata as string)).toEqual(metadata);
  });

  it('never stores an API key in plain text', async () => {
    const items = await scan(runtime.tables.apiKeys);
    expect(items.length).toBeGreaterThan(0);
    expect(JSON.stringify(items)).not.toContain(demo.apiKey);
    expect(items.some((i) => i.keyHash === createHash('sha256').update(demo.apiKey).digest('hex'))).toBe(
      true,
    );
  });
});

describe('POST /api/embed/sessions: authentication (401)', () => {
  const HOW_TO_SEND = 'Send your API key as `Authorization: Bearer <key>`';
  const INVALID = 'The API key is invalid';
  it.each([
    ['no Authorization header', {}, HOW_TO_SEND],
    ['an empty Authorization header', { Authorization: '' }, HOW_TO_SEND],
    ['a non-Bearer scheme', { Authorization: 'Basic dXNlcjpwYXNz' }, HOW_TO_SEND],
    ['a key without scheme', { Authorization: `esk_${'A'.repeat(43)}` }, HOW_TO_SEND],
    ['a malformed key', { Authorization: 'Bearer not-a-key' }, INVALID],
    ['an unknown key', { Authorization: `Bearer esk_${'A'.repeat(43)}` }, INVALID],
  ])('returns 401 with a Bearer challenge for %s: %s', async (_name, headers, message) => {
    const result = await call(runtime, '/api/embed/sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(valid()),
    });
    expectJsonError(result, 401, 'Unauthorized');
    expect(result.body.message).toBe(message);
    expect(result.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the %s scheme in any case', async (scheme) => {
    const result = await createSessionCall(runtime, valid(), { Authorization: `${scheme} ${demo.apiKey}` });
    expect(result.status).toBe(201);
  });

  // Deployed, the authorizer's result is cached for its TTL: the assembly's own tests check that delay.
  it.skipIf(testTarget() === 'assembly')(
    'refuses a revoked key at once (the local gateway does not cache authorizer results)',
    async () => {
      const { runAdmin } = await import('#admin/cli');
      const env = adminEnv(runtime);
      const created = (await runAdmin(['create-api-key', '--user', demo.userId], env)) as {
        apiKey: string;
        keyId: string;
      };
      expect(
        (await createSessionCall(runtime, valid(), { Authorization: `Bearer ${created.apiKey}` })).status,
      ).toBe(201);
      await runAdmin(['revoke-api-key', '--key-id', created.keyId], env);
      const refused = await createSessionCall(runtime, valid(), {
        Authorization: `Bearer ${created.apiKey}`,
      });
      expectJsonError(refused, 401, 'Unauthorized');
      expect(refused.body.message).toBe('The API key is invalid');
    },
  );
});

describe('POST /api/embed/sessions: body handling', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['a JSON look-alike', 'application/jsonp'],
  ])('returns 415 for %s', async (_name, contentType) => {
    const result = await createSessionCall(runtime, valid(), { 'Content-Type': contentType });
    expectJsonError(result, 415, 'Unsupported Media Type');
  });

  it('returns 415 when Content-Type is missing', async () => {
    const result = await call(runtime, '/api/embed/sessions', {
      method: 'POST',
      headers: { Authorization: `Bearer ${demo.apiKey}` },
      body: Buffer.from(JSON.stringify(valid())),
    });
    expectJsonError(result, 415, 'Unsupported Media Type');
  });

  it('accepts a charset parameter and any header-name case', async () => {
    const result = await createSessionCall(runtime, valid(), {
      'Content-Type': 'Application/JSON; charset=utf-8',
    });
    expect(result.status).toBe(201);
  });

  it.each([
    ['malformed JSON', '{"boardId":'],
    ['an empty body', ''],
    ['a JSON array', '[]'],
    ['a JSON string', '"hello"'],
    ['JSON null', 'null'],
  ])('returns 400 for %s', async (_name, body) => {
    expectJsonError(await createSessionCall(runtime, body), 400, 'Bad Request');
  });

  it('returns 413 for a body larger than the service reads', async () => {
    const result = await createSessionCall(runtime, {
      ...valid(),
      metadata: { blob: 'x'.repeat(300 * 1024) },
    });
    expectJsonError(result, 413, 'Payload Too Large');
  });

  it('accepts metadata under the limit even when every character arrives \\u-escaped', async () => {
    // 30 KiB of "é" (2 bytes each in UTF-8) written as \u00e9: the body is three times the metadata.
    const escaped = String.raw`\u00e9`.repeat(15 * 1024);
    const body = `{"boardId":"${demo.publicBoardId}","userId":"u","email":"a@b.co","metadata":{"text":"${escaped}"}}`;
    expect(body.length).toBeGreaterThan(90 * 1024);
    expect((await createSessionCall(runtime, body)).status).toBe(201);
  });

  it('returns the gateway’s 413 JSON for a body over API Gateway’s 10 MB limit', async () => {
    const result = await createSessionCall(runtime, 'x'.repeat(10 * 1024 * 1024 + 1));
    expectJsonError(result, 413, 'Payload Too Large');
  });
});

describe('POST /api/embed/sessions: validation (400 naming the field)', () => {
  /**
   * Each kind of rule once over HTTP, as the caller sees it (the status, the JSON error, the field named);
   * every rule and edge is tested on the validator itself (test/unit/lib/adapters/http/validation/create-session.test.ts).
   */
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['boardId is missing', { boardId: undefined }, /boardId/],
    ['boardId is a number', { boardId: 42 }, /boardId/],
    ['userId is longer than 256 characters', { userId: 'u'.repeat(257) }, /userId/],
    ['email is invalid', { email: 'not-an-email' }, /email/],
    ['avatarUrl is a javascript: URL', { avatarUrl: 'javascript:alert(1)' }, /avatarUrl/],
    ['metadata is an array', { metadata: [1, 2] }, /metadata/],
    ['expiresInSeconds is a fraction', { expiresInSeconds: 1.5 }, /expiresInSeconds/],
    ['expiresInSeconds is too large', { expiresInSeconds: 1e12 }, /expiresInSeconds.*too large/],
    ['an unknown field is sent', { colour: 'blue' }, /colour/],
  ];

  it.each(cases)('returns 400 when %s', async (_name, patch, message) => {
    const result = await createSessionCall(runtime, { ...valid(), ...patch });
    expectJsonError(result, 400, 'Bad Request');
    expect(result.body.message).toMatch(message);
  });

  it('accepts an expiresInSeconds that lands just inside year 9999', async () => {
    const seconds = Math.floor((Date.UTC(9999, 11, 31) - Date.now()) / 1000);
    const result = await createSessionCall(runtime, { ...valid(), expiresInSeconds: seconds });
    expect(result.status).toBe(201);
    expect((result.body.session as { expiresAt: string }).expiresAt.startsWith('9999-12-3')).toBe(true);
  });
});

describe('POST /api/embed/sessions: metadata limits are the storage’s', () => {
  const nest = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = {};
    for (let i = 1; i < levels; i += 1) value = { n: value };
    return value;
  };

  it('stores metadata nested 32 levels deep', async () => {
    expect((await createSessionCall(runtime, { ...valid(), metadata: nest(32) })).status).toBe(201);
  });

  it('returns 400 for metadata nested 33 levels deep', async () => {
    const result = await createSessionCall(runtime, { ...valid(), metadata: nest(33) });
    expectJsonError(result, 400, 'Bad Request');
    expect(result.body.message).toMatch(/metadata.*32/);
  });

  it('returns 400 for metadata larger than 32 KiB', async () => {
    const result = await createSessionCall(runtime, {
      ...valid(),
      metadata: { blob: 'x'.repeat(32 * 1024) },
    });
    expectJsonError(result, 400, 'Bad Request');
    expect(result.body.message).toMatch(/metadata/);
  });

  it.each([
    ['an integer beyond 2^53', '{"big": 123456789012345678901234567890}'],
    ['a number too small for DynamoDB', '{"tiny": 1e-200}'],
    ['a number too large for DynamoDB', '{"huge": 1e200}'],
    ['a lone surrogate', '{"text": "\\ud800"}'],
    ['nesting 20,000 levels deep', `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`],
  ])('returns 400, never 500, for %s', async (_name, metadata) => {
    const body = `{"boardId":"${demo.publicBoardId}","userId":"u","email":"a@b.co","metadata":${metadata}}`;
    const result = await createSessionCall(runtime, body);
    expectJsonError(result, 400, 'Bad Request');
  });

  it('keeps __proto__ as plain data and pollutes no prototype', async () => {
    const body = `{"boardId":"${demo.publicBoardId}","userId":"u","email":"a@b.co","metadata":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}`;
    const result = await createSessionCall(runtime, body);
    expect(result.status).toBe(201);
    expect(result.text).toContain('"__proto__":{"polluted":true}');
    expect(result.text).toContain('"constructor":{"prototype":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('POST /api/embed/sessions: board access', () => {
  it('returns 404 when the board does not exist', async () => {
    const result = await createSessionCall(runtime, { ...valid(), boardId: 'no-such-board' });
    expectJsonError(result, 404, 'Not Found');
    expect(result.body.message).toMatch(/board.*not found/i);
  });

  it('returns 403 for a private board of another organization', async () => {
    const result = await createSessionCall(runtime, { ...valid(), boardId: demo.otherOrgBoardId });
    expectJsonError(result, 403, 'Forbidden');
    expect(result.body.message).toMatch(/public boards or boards owned by your organization/);
  });
});

describe('POST /api/embed/sessions: order of checks', () => {
  it('checks the key (401) before the content type (415)', async () => {
    const result = await createSessionCall(runtime, 'x', {
      Authorization: 'Bearer nope',
      'Content-Type': 'text/plain',
    });
    expect(result.status).toBe(401);
  });

  it('checks the size (413) before the content type (415)', async () => {
    const result = await createSessionCall(runtime, 'x'.repeat(300 * 1024), { 'Content-Type': 'text/plain' });
    expect(result.status).toBe(413);
  });

  it('checks the content type (415) before the body (400)', async () => {
    const result = await createSessionCall(runtime, '{broken', { 'Content-Type': 'text/plain' });
    expect(result.status).toBe(415);
  });

  it('validates the body (400) before looking up the board (404)', async () => {
    const result = await createSessionCall(runtime, { ...valid(), boardId: 'no-such-board', email: 'bad' });
    expect(result.status).toBe(400);
  });

  it('reports a missing board (404) even to a key owner who belongs to no organization (no early 403)', async () => {
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      const { apiKey } = await createApiKey(
        {
          apiKeys: new DynamoApiKeyRepository(db, runtime.tables.apiKeys),
          throttling: RECORD_ONLY_THROTTLING,
          clock: systemClock,
          random: cryptoRandom,
        },
        'outsider-with-no-org',
        null,
      );
      const headers = { Authorization: `Bearer ${apiKey}` };
      const missing = await createSessionCall(runtime, { ...valid(), boardId: 'no-such-board' }, headers);
      expectJsonError(missing, 404, 'Not Found');
      const existing = await createSessionCall(
        runtime,
        { ...valid(), boardId: demo.privateBoardId },
        headers,
      );
      expectJsonError(existing, 403, 'Forbidden');
    } finally {
      db.destroy();
    }
  });
});

describe('routes', () => {
  it('answers GET /health without auth', async () => {
    const result = await call(runtime, '/health');
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ status: 'ok' });
  });

  it('returns JSON 404 for an unknown route', async () => {
    expectJsonError(await call(runtime, '/api/nothing-here'), 404, 'Not Found');
  });

  it('returns JSON 405 with Allow for a known path and the wrong method', async () => {
    const result = await call(runtime, '/api/embed/sessions', { method: 'PUT' });
    expectJsonError(result, 405, 'Method Not Allowed');
    expect(result.headers.get('allow')).toBe('GET, POST');
  });
});
