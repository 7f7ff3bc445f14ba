import { createHash, randomBytes } from 'node:crypto';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#lib/dynamodb/client';
import type { LocalRuntime } from '#local/runtime';
import {
  type CallResult,
  call,
  createSessionCall,
  startTestRuntime,
  storeSession,
} from '#test/support/local-runtime';

let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await startTestRuntime();
});
afterAll(() => runtime?.close());

async function newSession(extra: Record<string, unknown> = {}) {
  const result = await createSessionCall(runtime, {
    boardId: runtime.demo?.publicBoardId,
    userId: 'customer-7',
    email: 'grace@example.com',
    ...extra,
  });
  expect(result.status).toBe(201);
  return result.body as { sessionToken: string; embedUrl: string; session: { id: string } };
}

const token = () => randomBytes(24).toString('base64url');

function expectEmbedHeaders(result: CallResult) {
  const csp = result.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain('frame-ancestors https: http://localhost:* http://127.0.0.1:*');
  expect(csp).not.toContain('unsafe-inline');
  expect(result.headers.get('referrer-policy')).toBe('no-referrer');
  expect(result.headers.get('cache-control')).toBe('no-store');
  expect(result.headers.get('x-content-type-options')).toBe('nosniff');
  expect(result.headers.get('x-frame-options')).toBeNull();
}

describe('GET /embed with a usable token', () => {
  it('opens the embedUrl returned by create as a complete HTML page of the board and user', async () => {
    const created = await newSession({
      firstName: 'Grace',
      lastName: 'Hopper',
      plan: 'pro',
      avatarUrl: 'https://img.example.com/g.png',
    });
    const response = await fetch(created.embedUrl);
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('Product roadmap');
    expect(html).toContain('Grace Hopper');
    expect(html).toContain('>pro<');
    expect(html).toContain('src="https://img.example.com/g.png"');
  });

  it('sends the embed security headers and no X-Frame-Options', async () => {
    const created = await newSession();
    expectEmbedHeaders(await call(runtime, `/embed?token=${created.sessionToken}`));
  });

  it('shows the e-mail when no name was given', async () => {
    const created = await newSession();
    const { text } = await call(runtime, `/embed?token=${created.sessionToken}`);
    expect(text).toContain('grace@example.com');
  });

  it('embeds the public context as a JSON island without the token or its hash', async () => {
    const created = await newSession({ metadata: { team: 'ops' } });
    const { text } = await call(runtime, `/embed?token=${created.sessionToken}`);
    const island =
      /<script type="application\/json" id="embed-context">(.*?)<\/script>/s.exec(text)?.[1] ?? '';
    const context = JSON.parse(island);
    expect(context.session.id).toBe(created.session.id);
    expect(context.session.metadata).toEqual({ team: 'ops' });
    expect(context.board).toEqual({ id: runtime.demo?.publicBoardId, name: 'Product roadmap' });
    expect(text).not.toContain(created.sessionToken);
    expect(text).not.toContain(createHash('sha256').update(created.sessionToken).digest('hex'));
    expect(island).not.toContain('tokenHash');
  });

  it('escapes every user-supplied value so markup renders as text', async () => {
    const payload = '<script>alert(1)</script>';
    const attr = '"><img src=x onerror=alert(1)>';
    const created = await newSession({
      firstName: payload,
      lastName: attr,
      plan: attr,
      metadata: { note: '</script><script>alert(2)</script>' },
    });
    const { text } = await call(runtime, `/embed?token=${created.sessionToken}`);
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(text).not.toContain('<script>alert');
    expect(text).not.toContain('<img src=x');
    expect(text.match(/<\/script>/g)?.length).toBe(1);
  });

  it('answers JSON with the public context when asked for JSON', async () => {
    const created = await newSession();
    const result = await call(runtime, `/embed?token=${created.sessionToken}`, {
      headers: { Accept: 'application/json' },
    });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('application/json');
    expect((result.body.session as { id: string }).id).toBe(created.session.id);
  });
});

describe('GET /embed with an unusable token', () => {
  it('returns a styled 400 page when the token is missing', async () => {
    const result = await call(runtime, '/embed');
    expect(result.status).toBe(400);
    expect(result.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(result.text).toContain('data-testid="embed-error"');
    expectEmbedHeaders(result);
  });

  it.each([
    ['malformed', 'short'],
    ['too long', 'A'.repeat(33)],
    ['unknown', token()],
  ])('returns 401 "This embed link is not valid" for a %s token', async (_name, value) => {
    const result = await call(runtime, `/embed?token=${encodeURIComponent(value)}`);
    expect(result.status).toBe(401);
    expect(result.text).toContain('This embed link is not valid');
    expectEmbedHeaders(result);
  });

  it('returns 401 with an expiry message once expiresAt has passed', async () => {
    const expired = token();
    await storeSession(runtime, expired, {
      boardId: runtime.demo?.publicBoardId as string,
      expiresAt: new Date(Date.now() - 1).toISOString(),
    });
    const result = await call(runtime, `/embed?token=${expired}`);
    expect(result.status).toBe(401);
    expect(result.text).toContain('This embed session has expired');
    expect(result.text).toContain('reload');
  });

  it('returns 404 when the session’s board no longer exists', async () => {
    const orphan = token();
    await storeSession(runtime, orphan, {
      boardId: 'deleted-board',
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const result = await call(runtime, `/embed?token=${orphan}`);
    expect(result.status).toBe(404);
    expect(result.text).toContain('data-testid="embed-error"');
  });

  it('returns 404 when the board is deleted after the session was created', async () => {
    const { runAdmin } = await import('#admin/cli');
    const env = { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, AWS_REGION: 'local' };
    await runAdmin(['create-board', '--board', 'short-lived', '--org', 'o', '--visibility', 'PUBLIC'], env);
    const created = await newSession({ boardId: 'short-lived' });
    expect((await call(runtime, `/embed?token=${created.sessionToken}`)).status).toBe(200);
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    await db.send(new DeleteCommand({ TableName: runtime.tables.boards, Key: { boardId: 'short-lived' } }));
    db.destroy();
    expect((await call(runtime, `/embed?token=${created.sessionToken}`)).status).toBe(404);
  });

  it.each([
    ['missing', '', 400],
    ['malformed', '?token=bad', 401],
  ])('answers {error, message} JSON for a %s token when asked for JSON', async (_name, query, status) => {
    const result = await call(runtime, `/embed${query}`, { headers: { Accept: 'application/json' } });
    expect(result.status).toBe(status);
    expect(result.headers.get('content-type')).toBe('application/json');
    expect(Object.keys(result.body).sort()).toEqual(['error', 'message']);
    expectEmbedHeaders(result);
  });
});
