import { createHash, randomBytes } from 'node:crypto';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { createSessionAs, demoKey } from '#test/support/create-session-as';
import {
  adminEnv,
  apiCall,
  type CallResult,
  call,
  reachableUrl,
  storeSession,
} from '#test/support/local-runtime';
import { MARKUP_FIELDS } from '#test/support/markup-payloads';
import { WITHIN_THE_BOARD_CACHE } from '#test/support/read-cache';
import { useTestRuntime } from '#test/support/runtime-fixture';

const runtime = useTestRuntime();

const newSession = (extra: Record<string, unknown> = {}) =>
  createSessionAs(runtime, demoKey(runtime), { userId: 'customer-7', email: 'grace@example.com', ...extra });

const token = () => randomBytes(24).toString('base64url');

function expectEmbedHeaders(result: CallResult) {
  const csp = result.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*';/);
  expect(csp).toContain("connect-src 'none'");
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
    const response = await fetch(reachableUrl(runtime, created.embedUrl));
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
    expectEmbedHeaders(await call(runtime, `/embed?token=${created.token}`));
  });

  it('shows the e-mail when no name was given', async () => {
    const created = await newSession();
    const { text } = await call(runtime, `/embed?token=${created.token}`);
    expect(text).toContain('grace@example.com');
  });

  it('embeds the public context as a JSON island without the token or its hash', async () => {
    const created = await newSession({ metadata: { team: 'ops' } });
    const { text } = await call(runtime, `/embed?token=${created.token}`);
    const island =
      /<script type="application\/json" id="embed-context">(.*?)<\/script>/s.exec(text)?.[1] ?? '';
    const context = JSON.parse(island);
    expect(context.session.id).toBe(created.session.id);
    expect(context.session.metadata).toEqual({ team: 'ops' });
    expect(context.board).toEqual({ id: runtime.demo?.publicBoardId, name: 'Product roadmap' });
    expect(text).not.toContain(created.token);
    expect(text).not.toContain(createHash('sha256').update(created.token).digest('hex'));
    expect(island).not.toContain('tokenHash');
  });

  it('escapes every user-supplied value so markup renders as text', async () => {
    const created = await newSession(MARKUP_FIELDS);
    const { text } = await call(runtime, `/embed?token=${created.token}`);
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(text).not.toContain('<script>alert');
    expect(text).not.toContain('<img src=x');
    // The JSON island and the page's own script, each closed once: no payload closed or opened one.
    expect(text.match(/<\/script>/g)?.length).toBe(2);
  });

  it('answers JSON with the public context when asked for JSON', async () => {
    const created = await newSession();
    const result = await call(runtime, `/embed?token=${created.token}`, {
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
  ])('returns 401 with the invalid-link page for a %s token', async (_name, value) => {
    const result = await call(runtime, `/embed?token=${encodeURIComponent(value)}`);
    expect(result.status).toBe(401);
    expect(result.text).toContain('data-code="invalid_token"');
    expect(result.text).toContain('This link to the board is not valid.');
    expectEmbedHeaders(result);
  });

  it('returns 401 with the expired page once expiresAt has passed', async () => {
    const expired = token();
    await storeSession(runtime, expired, {
      boardId: runtime.demo?.publicBoardId as string,
      expiresAt: new Date(Date.now() - 1).toISOString(),
    });
    const result = await call(runtime, `/embed?token=${expired}`);
    expect(result.status).toBe(401);
    expect(result.text).toContain('Your access to this board has ended.');
    expect(result.text).toContain('Reload the page to open the board again.');
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
    const env = adminEnv(runtime);
    await runAdmin(['create-board', '--board', 'short-lived', '--org', 'o', '--visibility', 'PUBLIC'], env);
    const created = await newSession({ boardId: 'short-lived' });
    expect((await call(runtime, `/embed?token=${created.token}`)).status).toBe(200);
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    await db.send(new DeleteCommand({ TableName: runtime.tables.boards, Key: { boardId: 'short-lived' } }));
    db.destroy();
    // Each environment keeps a board it read for a second: the deletion counts within it.
    await expect
      .poll(async () => (await call(runtime, `/embed?token=${created.token}`)).status, WITHIN_THE_BOARD_CACHE)
      .toBe(404);
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

/** The value of the binding cookie a response sets, or undefined. */
function bindingCookieOf(result: CallResult): string | undefined {
  return /^__Host-embed_binding=([^;]+);/.exec(result.headers.get('set-cookie') ?? '')?.[1];
}

describe('GET /embed for a session created with bindToBrowser', () => {
  it('binds on the first load, then opens only with the cookie it set', async () => {
    const created = await newSession({ bindToBrowser: true });
    const path = `/embed?token=${created.token}`;

    const first = await call(runtime, path);
    expect(first.status).toBe(200);
    expect(first.headers.get('set-cookie')).toMatch(
      /^__Host-embed_binding=[\w-]{43}; Path=\/; Max-Age=34560000; Secure; HttpOnly; SameSite=None; Partitioned$/,
    );
    const secret = bindingCookieOf(first) as string;

    const again = await call(runtime, path, { headers: { Cookie: `__Host-embed_binding=${secret}` } });
    expect(again.status).toBe(200);
    expect(bindingCookieOf(again)).toBe(secret);

    for (const cookie of [undefined, `__Host-embed_binding=${'x'.repeat(43)}`]) {
      const elsewhere = await call(runtime, path, { headers: cookie ? { Cookie: cookie } : {} });
      expect(elsewhere.status).toBe(401);
      expect(elsewhere.text).toContain('data-code="bound_to_another_browser"');
      expect(elsewhere.headers.get('set-cookie')).toBeNull();
      expectEmbedHeaders(elsewhere);
    }
  });

  it('shows boundAt in the session’s retrieve and list views once bound, never the binding hash', async () => {
    const created = await newSession({ bindToBrowser: true, userId: 'binding-viewer' });
    const apiKey = runtime.demo?.apiKey as string;
    const before = await apiCall(runtime, apiKey, 'GET', `/api/embed/sessions/${created.session.id}`);
    expect(before.body.session).toMatchObject({ bindToBrowser: true, boundAt: null });

    const opened = Date.now();
    await call(runtime, `/embed?token=${created.token}`);
    const after = await apiCall(runtime, apiKey, 'GET', `/api/embed/sessions/${created.session.id}`);
    const boundAt = (after.body.session as { boundAt: string }).boundAt;
    expect(Date.parse(boundAt)).toBeGreaterThanOrEqual(opened - 1000);
    const listed = await apiCall(runtime, apiKey, 'GET', '/api/embed/sessions?userId=binding-viewer');
    expect((listed.body.data as Array<{ boundAt: string }>)[0]?.boundAt).toBe(boundAt);
    expect(JSON.stringify([after.body, listed.body])).not.toMatch(/bindingHash|[0-9a-f]{64}/);
  });

  it('lets only one of several simultaneous first loads in', async () => {
    const created = await newSession({ bindToBrowser: true });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => call(runtime, `/embed?token=${created.token}`)),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([200, 401, 401, 401, 401]);
    const winner = results.find((result) => result.status === 200) as CallResult;
    const secret = bindingCookieOf(winner);
    const reload = await call(runtime, `/embed?token=${created.token}`, {
      headers: { Cookie: `__Host-embed_binding=${secret}` },
    });
    expect(reload.status).toBe(200);
  });

  it('says "revoked" for a revoked bound link, even in the browser it is bound to', async () => {
    const created = await newSession({ bindToBrowser: true });
    const secret = bindingCookieOf(await call(runtime, `/embed?token=${created.token}`));
    await apiCall(
      runtime,
      runtime.demo?.apiKey as string,
      'POST',
      `/api/embed/sessions/${created.session.id}/revoke`,
    );
    const result = await call(runtime, `/embed?token=${created.token}`, {
      headers: { Cookie: `__Host-embed_binding=${secret}` },
    });
    expect(result.status).toBe(401);
    expect(result.text).toContain('data-code="session_revoked"');
  });

  it('sets no cookie for a session created without bindToBrowser, however often it is opened', async () => {
    const created = await newSession();
    for (let i = 0; i < 2; i++) {
      const result = await call(runtime, `/embed?token=${created.token}`);
      expect(result.status).toBe(200);
      expect(result.headers.get('set-cookie')).toBeNull();
    }
  });
});

describe('GET /embed for a board with its own embed origins', () => {
  const frameAncestors = (result: CallResult) =>
    /frame-ancestors ([^;]*)/.exec(result.headers.get('content-security-policy') ?? '')?.[1];

  it('is framed by the board’s origins only, while other boards and unknown tokens keep the default', async () => {
    const { runAdmin } = await import('#admin/cli');
    const env = adminEnv(runtime);
    const args = ['create-board', '--board', 'listed-board', '--org', 'o', '--visibility', 'PUBLIC'];
    await runAdmin([...args, '--embed-origins', 'https://app.acme.com, https://*.acme.com'], env);
    const listed = await newSession({ boardId: 'listed-board' });
    expect(frameAncestors(await call(runtime, `/embed?token=${listed.token}`))).toBe(
      'https://app.acme.com https://*.acme.com',
    );
    expect(frameAncestors(await call(runtime, `/embed?token=${(await newSession()).token}`))).toBe(
      'https: http://localhost:* http://127.0.0.1:*',
    );
    expect(frameAncestors(await call(runtime, `/embed?token=${token()}`))).toBe(
      'https: http://localhost:* http://127.0.0.1:*',
    );

    await runAdmin([...args, '--embed-origins', ''], env);
    await expect
      .poll(
        async () => frameAncestors(await call(runtime, `/embed?token=${listed.token}`)),
        WITHIN_THE_BOARD_CACHE,
      )
      .toBe('https: http://localhost:* http://127.0.0.1:*');
  });
});

describe('GET /embed with theme and locale', () => {
  it('renders the requested theme and language, and English with the system theme for anything else', async () => {
    const created = await newSession();
    const german = await call(runtime, `/embed?token=${created.token}&theme=dark&locale=de-DE`);
    expect(german.text).toContain('<html lang="de" data-theme="dark">');
    expect(german.text).toContain('Angemeldet als');
    const other = await call(
      runtime,
      `/embed?token=${created.token}&theme=%22%3E%3Cscript%3E&locale=%3Cb%3Eja%3C%2Fb%3E`,
    );
    expect(other.status).toBe(200);
    expect(other.text).toContain('<html lang="en" data-theme="auto">');
    expect(other.text).not.toContain('"><script>');
    expect(other.text).not.toContain('<b>ja');
  });

  it('renders error pages in the requested language', async () => {
    const result = await call(runtime, `/embed?token=${token()}&locale=es`);
    expect(result.status).toBe(401);
    expect(result.text).toContain('Este enlace al tablero no es válido.');
  });
});

describe('GET /embed/ended (the view a board application sends its frame to)', () => {
  it('shows the expired or revoked view in the session’s language and theme, with no token, under the stage’s frame-ancestors', async () => {
    for (const [reason, code, sentence] of [
      ['expired', 'session_expired', 'Ihr Zugang zu diesem Board ist abgelaufen.'],
      ['revoked', 'session_revoked', 'Ihr Zugang zu diesem Board wurde zurückgezogen.'],
    ] as const) {
      const result = await call(runtime, `/embed/ended?reason=${reason}&locale=de&theme=dark`);
      expect(result.status).toBe(200);
      expect(result.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expectEmbedHeaders(result);
      expect(result.text).toMatch(/^<!doctype html>\n<html lang="de" data-theme="dark">/);
      expect(result.text).toContain(`data-testid="embed-ended" data-code="${code}"`);
      expect(result.text).toContain(sentence);
      expect(result.text).toContain(`data-embed-reason="${reason}"`);
    }
  });

  it('falls back to a neutral view in English and the automatic theme, never an error page', async () => {
    for (const query of ['', '?reason=deleted&locale=pt&theme=neon', '?reason=&locale=&theme=']) {
      const result = await call(runtime, `/embed/ended${query}`);
      expect(result.status).toBe(200);
      expect(result.text).toMatch(/^<!doctype html>\n<html lang="en" data-theme="auto">/);
      expect(result.text).toContain('This board is closed.');
      expect(result.text).not.toContain('data-testid="embed-error"');
    }
  });
});

describe('HEAD /embed (link unfurlers)', () => {
  const head = (path: string, headers: Record<string, string> = {}) =>
    call(runtime, path, { method: 'HEAD', headers });

  it('answers as GET would, without a body: 200 with the page headers for a usable link', async () => {
    const created = await newSession();
    const result = await head(`/embed?token=${created.token}`);
    expect(result.status).toBe(200);
    expect(result.text).toBe('');
    expect(result.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expectEmbedHeaders(result);
  });

  it.each([
    ['an unknown token', () => `/embed?token=${token()}`, 401],
    ['no token', () => '/embed', 400],
  ])('answers %s with the status GET gives, without a body', async (_label, path, status) => {
    const result = await head(path());
    expect(result.status).toBe(status);
    expect(result.text).toBe('');
  });

  it('answers a revoked link 401, as GET does', async () => {
    const created = await newSession();
    await apiCall(
      runtime,
      String(runtime.demo?.apiKey),
      'POST',
      `/api/embed/sessions/${created.session.id}/revoke`,
    );
    expect((await head(`/embed?token=${created.token}`)).status).toBe(401);
  });

  it('never binds a bindToBrowser link nor sets a cookie: the first real load still binds it', async () => {
    const created = await newSession({ bindToBrowser: true });
    const peeked = await head(`/embed?token=${created.token}`);
    expect(peeked.status).toBe(200);
    expect(peeked.headers.get('set-cookie')).toBeNull();
    const session = await apiCall(
      runtime,
      String(runtime.demo?.apiKey),
      'GET',
      `/api/embed/sessions/${created.session.id}`,
    );
    expect(session.body.session).toMatchObject({ bindToBrowser: true, boundAt: null });
    const opened = await call(runtime, `/embed?token=${created.token}`);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('set-cookie')).toMatch(/^__Host-embed_binding=/);
    // A bound link, peeked at by another browser: 401, as GET would answer it.
    expect((await head(`/embed?token=${created.token}`)).status).toBe(401);
  });
});
