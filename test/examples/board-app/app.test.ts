import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdTokenClaims } from '#lib/domain/id-token';
import { LocalIdTokenKeys } from '#lib/signing/local-keys';
import { createSessionCall, ensureStatus } from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { type RunningBoardApp, startBoardApp } from '../../../examples/board-app/server';
import { LOGOUT_EVENT } from '../../../examples/board-app/verify';

/**
 * The reference board application over HTTP, beside the local runtime: the real hand-off (the embed page's
 * token for a board whose appUrl is the app), and tokens signed here with the runtime's own local key for
 * what the embed page never sends (expired, for another audience, tampered, logout tokens).
 */
const runtime = useTestRuntime();
let app: RunningBoardApp;
let keys: LocalIdTokenKeys;

beforeAll(async () => {
  app = await startBoardApp({ port: 0 });
  app.serve({ issuer: runtime.baseUrl });
  keys = new LocalIdTokenKeys(process.env.ID_TOKEN_KEY_FILE as string);
  await putPublicBoard(runtime, 'board_reference_app', 'org_demo', {
    name: 'Feature requests',
    appUrl: app.appUrl,
  });
});
afterAll(async () => {
  await app?.close();
});

/** The ID token the embed page hands over for a fresh session of the reference app's board. */
async function handedOffToken(user: Record<string, unknown> = {}): Promise<string> {
  const created = await createSessionCall(runtime, {
    boardId: 'board_reference_app',
    userId: `customer-${randomUUID()}`,
    email: 'ada@example.com',
    firstName: 'Ada',
    lastName: 'Lovelace',
    avatarUrl: 'https://avatars.example.com/ada.png',
    ...user,
  });
  ensureStatus(created, 201);
  const embed = await fetch(created.body.embedUrl as string, { headers: { Accept: 'application/json' } });
  const { handoff } = (await embed.json()) as { handoff: { url: string; idToken: string } };
  expect(handoff.url).toBe(app.appUrl);
  return handoff.idToken;
}

/** A token signed with the runtime's key: a good hand-off's claims unless `claims` overrides them. */
function signed(claims: Record<string, unknown>): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return keys.sign({
    iss: runtime.baseUrl,
    aud: app.origin,
    sub: 'pairwise-subject',
    user_id: 'customer-1',
    email: 'grace@example.com',
    given_name: 'Grace',
    family_name: 'Hopper',
    picture: null,
    plan: null,
    metadata: {},
    board_id: 'board_reference_app',
    board_name: 'Feature requests',
    sid: randomUUID(),
    iat,
    exp: iat + 300,
    jti: randomUUID(),
    ...claims,
  } as IdTokenClaims);
}

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${app.origin}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Posts the hand-off; on success returns the session cookie (`name=value`). */
async function handOff(idToken: string, extra: Record<string, string> = {}) {
  const response = await post('/handoff', { id_token: idToken, ...extra });
  const setCookie = response.headers.get('set-cookie');
  return { response, cookie: setCookie?.split(';')[0], setCookie, text: await response.text() };
}

function board(cookie: string | undefined) {
  return fetch(`${app.origin}/board`, { headers: cookie ? { Cookie: cookie } : {} });
}

describe('the reference board application: the hand-off', () => {
  it('answers 503 with a clear page while the issuer cannot be reached, or names another issuer in its discovery', async () => {
    // An "issuer" whose discovery document names another issuer (OIDC Discovery 1.0, section 4.3).
    const impostor = createServer((_req, res) =>
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(
          JSON.stringify({ issuer: runtime.baseUrl, jwks_uri: `${runtime.baseUrl}/.well-known/jwks.json` }),
        ),
    ).listen(0, '127.0.0.1');
    await once(impostor, 'listening');
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as AddressInfo).port;
    closed.close();
    try {
      for (const issuer of [
        `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`,
        `http://127.0.0.1:${closedPort}`,
      ]) {
        const other = await startBoardApp({ port: 0 });
        other.serve({ issuer });
        try {
          const response = await fetch(`${other.appUrl}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              id_token: await signed({ iss: issuer, aud: other.origin }),
            }).toString(),
          });
          expect(response.status).toBe(503);
          expect(response.headers.get('set-cookie')).toBeNull();
          expect(await response.text()).toContain('data-reason="unavailable"');
        } finally {
          await other.close();
        }
      }
    } finally {
      impostor.close();
    }
  });

  it('verifies the embed page’s token, keeps its own session in a partitioned host cookie and redirects to the board', async () => {
    const { response, setCookie, cookie } = await handOff(await handedOffToken(), {
      theme: 'dark',
      locale: 'de',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/board');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(setCookie).toMatch(/^__Host-board-session=[A-Za-z0-9_-]{43}; /);
    const attributes = (setCookie as string).split('; ').slice(1);
    expect(attributes).toEqual(
      expect.arrayContaining(['Path=/', 'Secure', 'HttpOnly', 'SameSite=None', 'Partitioned']),
    );
    expect(attributes.some((a) => /^Domain=/i.test(a))).toBe(false);

    const page = await board(cookie);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<strong id="user-name">Ada Lovelace</strong>');
    expect(html).toContain('<img src="https://avatars.example.com/ada.png"');
    expect(html).toContain('<h1>Feature requests</h1>');
    expect(html).toContain(`<script src="${runtime.baseUrl}/embed-board.js"></script>`);
    // The host's theme and locale followed the user into the app's own session.
    expect(html).toMatch(/<html lang="de" data-theme="dark">/);
    expect(html).toContain('Angemeldet als');
    expect(page.headers.get('content-security-policy')).toContain(`script-src 'nonce-`);
  });

  it('refuses the same token a second time with a clear page and 401, and starts no session', async () => {
    const idToken = await handedOffToken();
    expect((await handOff(idToken)).response.status).toBe(303);
    const replay = await handOff(idToken);
    expect(replay.response.status).toBe(401);
    expect(replay.setCookie).toBeNull();
    expect(replay.text).toContain('data-reason="replayed"');
    expect(replay.text).toContain('The sign-in link was used already.');
  });

  it('refuses a token for another audience, an expired one, a tampered one and one of another issuer', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      { token: await signed({ aud: 'https://other-board.example.com' }), reason: 'audience' },
      { token: await signed({ iat: now - 600, exp: now - 300 }), reason: 'expired' },
      { token: await signed({ iss: 'https://evil.example.com' }), reason: 'invalid' },
      {
        token: (await signed({})).replace(/\.([^.]+)\.([^.]+)$/, (_m, body: string, sig: string) => {
          const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
          claims.email = 'mallory@example.com';
          return `.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
        }),
        reason: 'invalid',
      },
      { token: 'not-a-jwt', reason: 'invalid' },
    ];
    for (const { token, reason } of cases) {
      const refused = await handOff(token);
      expect({ reason, status: refused.response.status }).toEqual({ reason, status: 401 });
      expect(refused.setCookie).toBeNull();
      expect(refused.text).toContain(`data-reason="${reason}"`);
      expect(refused.text).not.toMatch(/at .*\.ts:\d+|Error:/);
      expect(refused.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    }
  });

  it('answers 400 to a hand-off without a token, and 401 to the board without a session', async () => {
    expect((await post('/handoff', { theme: 'dark' })).status).toBe(400);
    const page = await board(undefined);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('data-reason="no-session"');
    expect((await board('__Host-board-session=forged')).status).toBe(401);
  });

  it('counts a vote once per user and takes it back on a second vote, with the session’s form token only', async () => {
    const { cookie } = await handOff(await handedOffToken());
    const html = await (await board(cookie)).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const count = async () =>
      /data-post="csv-export">[^<]*<\/span>\s*<span class="count">(\d+)/.exec(
        await (await board(cookie)).text(),
      )?.[1];
    const before = Number(await count());
    expect((await post('/vote', { post: 'csv-export', csrf }, { Cookie: cookie as string })).status).toBe(
      303,
    );
    expect(Number(await count())).toBe(before + 1);
    expect(
      (await post('/vote', { post: 'csv-export', csrf: 'forged' }, { Cookie: cookie as string })).status,
    ).toBe(403);
    expect(Number(await count())).toBe(before + 1);
    await post('/vote', { post: 'csv-export', csrf }, { Cookie: cookie as string });
    expect(Number(await count())).toBe(before);
  });
});

/** A logout token (OpenID Connect Back-Channel Logout 1.0) for `sid`, with `claims` overriding. */
function logoutToken(sid: string, claims: Record<string, unknown> = {}): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return keys.sign({
    iss: runtime.baseUrl,
    aud: app.origin,
    iat,
    exp: iat + 120,
    jti: randomUUID(),
    sid,
    events: { [LOGOUT_EVENT]: {} },
    ...claims,
  } as unknown as IdTokenClaims);
}

describe('the reference board application: back-channel logout', () => {
  it('ends every session of the logged-out sid at once, and no other', async () => {
    const sid = randomUUID();
    const first = await handOff(await signed({ sid }));
    const second = await handOff(await signed({ sid }));
    const other = await handOff(await signed({}));
    for (const session of [first, second, other]) expect((await board(session.cookie)).status).toBe(200);

    const answer = await post('/backchannel-logout', { logout_token: await logoutToken(sid) });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');

    for (const session of [first, second]) {
      const page = await board(session.cookie);
      expect(page.status).toBe(401);
      const html = await page.text();
      expect(html).toContain('data-reason="ended"');
      // The host page is told, through the board script, that the session was revoked.
      expect(html).toContain('EmbedBoard.revoked();');
    }
    expect((await board(other.cookie)).status).toBe(200);
  });

  it('answers 400, no-store, to a logout token that is unsigned, misaddressed or not a logout event', async () => {
    const sid = randomUUID();
    const session = await handOff(await signed({ sid }));
    const now = Math.floor(Date.now() / 1000);
    const bad: Record<string, string> = {
      'no events claim': await logoutToken(sid, { events: undefined }),
      'another event': await logoutToken(sid, { events: { 'https://example.com/other-event': {} } }),
      'a nonce': await logoutToken(sid, { nonce: 'n-0S6_WzA2Mj' }),
      'no sid': await logoutToken(sid, { sid: undefined }),
      'another audience': await logoutToken(sid, { aud: 'https://other-board.example.com' }),
      'another issuer': await logoutToken(sid, { iss: 'https://evil.example.com' }),
      'no iat': await logoutToken(sid, { iat: undefined }),
      'an old iat': await logoutToken(sid, { iat: now - 3600, exp: now + 60 }),
      'an ID token': await signed({ sid }),
      'a bad signature': `${(await logoutToken(sid)).slice(0, -4)}AAAA`,
      'no token': '',
    };
    for (const [what, token] of Object.entries(bad)) {
      const answer = await post('/backchannel-logout', token ? { logout_token: token } : {});
      expect({ what, status: answer.status }).toEqual({ what, status: 400 });
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(((await answer.json()) as { error: string }).error).toBe('invalid_request');
    }
    expect((await board(session.cookie)).status).toBe(200);
  });
});
