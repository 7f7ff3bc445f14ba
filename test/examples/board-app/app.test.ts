import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdTokenClaims } from '#lib/domain/id-token';
import { runtimeIdTokenKeys } from '#test/support/id-token-keys';
import { createSessionCall, ensureStatus } from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { LOOK_COOKIE, SESSION_COOKIE } from '../../../examples/board-app/app';
import { type RunningBoardApp, startBoardApp } from '../../../examples/board-app/server';
import { LOGOUT_EVENT } from '../../../examples/board-app/verify';

/**
 * The reference board application over HTTP, beside the local runtime: the real hand-off (the embed page's
 * token for a board whose appUrl is the app), and tokens signed here with the runtime's own local key for
 * what the embed page never sends (expired, for another audience, tampered, logout tokens).
 */
const runtime = useTestRuntime();
let app: RunningBoardApp;
let keys: ReturnType<typeof runtimeIdTokenKeys>;

beforeAll(async () => {
  app = await startBoardApp({ port: 0 });
  app.serve({ issuer: runtime.baseUrl });
  keys = runtimeIdTokenKeys(runtime);
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

/**
 * A token signed with the runtime's key: a good hand-off's claims unless `claims` overrides them, issued
 * `at` (seconds; now by default), for a session that ends an hour later.
 */
function signed(claims: Record<string, unknown>, at = Math.floor(Date.now() / 1000)): Promise<string> {
  const iat = at;
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
    session_exp: iat + 3600,
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

/**
 * Posts the hand-off (to `to`, the shared app unless told); on success returns the session cookie and the
 * look cookie (`name=value; name=value`), and the session cookie's own Set-Cookie.
 */
async function handOff(idToken: string, extra: Record<string, string> = {}, to = app) {
  const response = await fetch(`${to.origin}/handoff`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ id_token: idToken, ...extra }).toString(),
  });
  const cookies = response.headers.getSetCookie();
  const setCookie = cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`)) ?? null;
  const cookie = cookies.length > 0 ? cookies.map((c) => c.split(';')[0]).join('; ') : undefined;
  return { response, cookie, setCookie, cookies, text: await response.text() };
}

function board(cookie: string | undefined, on = app) {
  return fetch(`${on.origin}/board`, { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} });
}

/** Where the app sends the frame when it shows no board: the service's ended view, with its query. */
function endedView(response: Response): { status: number; reason?: string; locale?: string; theme?: string } {
  const location = new URL(response.headers.get('location') ?? 'about:blank');
  expect(`${location.origin}${location.pathname}`).toBe(`${runtime.baseUrl}/embed/ended`);
  const query = Object.fromEntries(location.searchParams);
  return { status: response.status, ...query };
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
          const text = await response.text();
          expect(text).toContain('data-reason="unavailable"');
          // The host page hears the code the service's own page would say.
          expect(text).toContain(`<script src="${issuer}/embed-board.js"></script>`);
          expect(text).toMatch(
            /<script nonce="[^"]+">if \(window\.EmbedBoard\) EmbedBoard\.error\("unavailable"\);<\/script>/,
          );
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
      // The host page hears invalid_token, as from the service's page of a link it refuses.
      expect(refused.text).toContain(`<script src="${runtime.baseUrl}/embed-board.js"></script>`);
      expect(refused.text).toMatch(
        /<script nonce="[^"]+">if \(window\.EmbedBoard\) EmbedBoard\.error\("invalid_token"\);<\/script>/,
      );
      expect(refused.text).not.toMatch(/at .*\.ts:\d+|Error:/);
      expect(refused.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    }
  });

  it('answers 400 to a hand-off without a token, and sends a request without a session to the service’s ended view', async () => {
    expect((await post('/handoff', { theme: 'dark' })).status).toBe(400);
    for (const cookie of [undefined, '__Host-board-session=forged']) {
      const page = await board(cookie);
      expect(endedView(page)).toEqual({ status: 303, locale: 'en', theme: 'auto' });
      expect(await page.text()).toBe('');
    }
    // The look cookie of an earlier session still tells its language and theme.
    const forgotten = await board('__Host-board-session=forgotten; __Host-board-look=de.dark');
    expect(endedView(forgotten)).toEqual({ status: 303, locale: 'de', theme: 'dark' });
  });

  it('keeps the session’s language and theme in a cookie of their own, beside the session', async () => {
    const { cookies } = await handOff(await signed({}), { locale: 'fr', theme: 'light' });
    const look = cookies.find((c) => c.startsWith(`${LOOK_COOKIE}=`));
    expect(look).toMatch(/^__Host-board-look=fr\.light; /);
    expect((look as string).split('; ')).toEqual(
      expect.arrayContaining(['Path=/', 'Secure', 'HttpOnly', 'SameSite=None', 'Partitioned']),
    );
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

/** The vote count and the signed-in user's own vote on a post, as the board page shows them. */
async function voteOn(cookie: string, postId: string, on = app) {
  const html = await (await board(cookie, on)).text();
  const item = new RegExp(`data-post="${postId}">[\\s\\S]*?</li>`).exec(html)?.[0] ?? '';
  return {
    count: Number(/<span class="count">(\d+)/.exec(item)?.[1]),
    mine: /aria-pressed="true"/.test(item),
    csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string,
  };
}

async function castVote(cookie: string, postId: string, on = app) {
  const { csrf } = await voteOn(cookie, postId, on);
  const answer = await fetch(`${on.origin}/vote`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
    body: new URLSearchParams({ post: postId, csrf }).toString(),
  });
  expect(answer.status).toBe(303);
}

describe('the reference board application: whose user it is', () => {
  it('takes another tenant’s user with the same userId and sub for a different user: no vote of theirs is theirs', async () => {
    const boardId = `board-${randomUUID()}`;
    const sameUser = { user_id: 'customer-42', sub: 'same-subject', board_id: boardId };
    const tenantA = await handOff(await signed({ ...sameUser, tid: 'tenant-a' }));
    const tenantB = await handOff(await signed({ ...sameUser, tid: 'tenant-b' }));

    await castVote(tenantA.cookie as string, 'sso');
    expect(await voteOn(tenantA.cookie as string, 'sso')).toMatchObject({ count: 1, mine: true });
    // The other tenant's user sees the vote counted, but not as theirs…
    expect(await voteOn(tenantB.cookie as string, 'sso')).toMatchObject({ count: 1, mine: false });
    // …and voting adds theirs rather than taking the first one's back.
    await castVote(tenantB.cookie as string, 'sso');
    expect(await voteOn(tenantB.cookie as string, 'sso')).toMatchObject({ count: 2, mine: true });
    expect(await voteOn(tenantA.cookie as string, 'sso')).toMatchObject({ count: 2, mine: true });
  });

  it('keeps one user’s votes across their sessions, and tells two subjects of one tenant apart', async () => {
    const boardId = `board-${randomUUID()}`;
    const first = await handOff(await signed({ sub: 'ada', tid: 'tenant-a', board_id: boardId }));
    const again = await handOff(await signed({ sub: 'ada', tid: 'tenant-a', board_id: boardId }));
    const other = await handOff(await signed({ sub: 'grace', tid: 'tenant-a', board_id: boardId }));
    await castVote(first.cookie as string, 'csv-export');
    expect(await voteOn(again.cookie as string, 'csv-export')).toMatchObject({ count: 1, mine: true });
    expect(await voteOn(other.cookie as string, 'csv-export')).toMatchObject({ count: 1, mine: false });
  });
});

describe('the reference board application: its session ends with the embed session', () => {
  /** An app whose clock the test moves, starting at the real time (the tokens are signed at it). */
  async function appWithClock() {
    const clock = { ms: Date.now() };
    const clocked = await startBoardApp({ port: 0 });
    clocked.serve({ issuer: runtime.baseUrl, now: () => new Date(clock.ms) });
    opened.push(clocked);
    return { clocked, clock };
  }
  const opened: RunningBoardApp[] = [];
  afterAll(async () => {
    for (const each of opened) await each.close();
  });

  /** A token for the clocked app: issued now, for an embed session with `left` seconds left. */
  const tokenFor = (on: RunningBoardApp, left: number, claims: Record<string, unknown> = {}) => {
    const iat = Math.floor(Date.now() / 1000);
    return signed({ aud: on.origin, iat, session_exp: iat + left, ...claims }, iat);
  };

  it('never serves the board after the session’s expiry: the board, a vote and the watch all say it ended', async () => {
    const { clocked, clock } = await appWithClock();
    const { cookie } = await handOff(await tokenFor(clocked, 12), { locale: 'de', theme: 'dark' }, clocked);
    const session = cookie as string;
    clock.ms += 11_000;
    const page = await board(session, clocked);
    expect(page.status).toBe(200);
    // The page's script is told the time left, to end the frame on time.
    expect(/"expiresIn":([\d.]+)/.exec(await page.text())?.[1]).toBe('1');
    const { count, csrf } = await voteOn(session, 'sso', clocked);

    clock.ms += 1_000;
    expect(endedView(await board(session, clocked))).toEqual({
      status: 303,
      reason: 'expired',
      locale: 'de',
      theme: 'dark',
    });
    const vote = await fetch(`${clocked.origin}/vote`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: session },
      body: new URLSearchParams({ post: 'sso', csrf }).toString(),
    });
    expect(endedView(vote)).toMatchObject({ status: 303, reason: 'expired' });
    const watched = await fetch(`${clocked.origin}/session`, { headers: { Cookie: session } });
    expect(await watched.json()).toEqual({ active: false, reason: 'expired' });
    // The vote did not count: the board, asked again by a live session of the same user, still says so.
    const fresh = await handOff(await tokenFor(clocked, 600), {}, clocked);
    expect((await voteOn(fresh.cookie as string, 'sso', clocked)).count).toBe(count);
  });

  it('counts the time left on the service’s clock (session_exp − iat), however far its own clock is off', async () => {
    const { clocked, clock } = await appWithClock();
    // The token was issued by a service whose clock is two minutes behind this application's (as far as
    // a five-minute token allows).
    const serviceNow = Math.floor(Date.now() / 1000) - 120;
    const token = await signed(
      { aud: clocked.origin, iat: serviceNow, exp: serviceNow + 300, session_exp: serviceNow + 30 },
      serviceNow,
    );
    const { cookie } = await handOff(token, {}, clocked);
    clock.ms += 29_000;
    expect((await board(cookie, clocked)).status).toBe(200);
    clock.ms += 1_000;
    expect(endedView(await board(cookie, clocked))).toMatchObject({ status: 303, reason: 'expired' });
  });

  it('keeps its own session no longer than eight hours, however long the embed session lasts', async () => {
    const { clocked, clock } = await appWithClock();
    const { cookie } = await handOff(await tokenFor(clocked, 30 * 24 * 3600), {}, clocked);
    clock.ms += 8 * 3600 * 1000 - 1000;
    expect((await board(cookie, clocked)).status).toBe(200);
    clock.ms += 1000;
    expect((await board(cookie, clocked)).status).toBe(303);
  });

  it('refuses a hand-off token without session_exp', async () => {
    const refused = await handOff(await signed({ session_exp: undefined }));
    expect(refused.response.status).toBe(401);
    expect(refused.setCookie).toBeNull();
    expect(refused.text).toContain('data-reason="invalid"');
  });

  it('answers the watch with {"active": true} while the session lives, and {"active": false} without one', async () => {
    const { cookie } = await handOff(await signed({}));
    const watch = (headers: Record<string, string>) => fetch(`${app.origin}/session`, { headers });
    const live = await watch({ Cookie: cookie as string });
    expect(live.status).toBe(200);
    expect(live.headers.get('cache-control')).toBe('no-store');
    expect(await live.json()).toEqual({ active: true });
    expect(await (await watch({})).json()).toEqual({ active: false });
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
      // The frame goes to the service's revoked view, which tells the host page; the watch says so too.
      expect(endedView(await board(session.cookie))).toEqual({
        status: 303,
        reason: 'revoked',
        locale: 'en',
        theme: 'auto',
      });
      const watched = await fetch(`${app.origin}/session`, { headers: { Cookie: session.cookie as string } });
      expect(await watched.json()).toEqual({ active: false, reason: 'revoked' });
    }
    expect((await board(other.cookie)).status).toBe(200);
  });

  it('ends every session of the user a logout token without sid names (sub, in its tenant), and no other', async () => {
    const sub = `subject-${randomUUID()}`;
    const tenantA = [
      await handOff(await signed({ sub, tid: 'tenant-a' }), { locale: 'es', theme: 'dark' }),
      await handOff(await signed({ sub, tid: 'tenant-a' })),
    ];
    const tenantB = await handOff(await signed({ sub, tid: 'tenant-b' }));
    const someoneElse = await handOff(await signed({ tid: 'tenant-a' }));

    const answer = await post('/backchannel-logout', {
      logout_token: await logoutToken('', { sid: undefined, sub, tid: 'tenant-a' }),
    });
    expect(answer.status).toBe(200);
    expect(endedView(await board(tenantA[0]?.cookie))).toEqual({
      status: 303,
      reason: 'revoked',
      locale: 'es',
      theme: 'dark',
    });
    expect((await board(tenantA[1]?.cookie)).status).toBe(303);
    expect((await board(tenantB.cookie)).status).toBe(200);
    expect((await board(someoneElse.cookie)).status).toBe(200);

    // Without a tid, the subject's sessions end in every tenant.
    await post('/backchannel-logout', { logout_token: await logoutToken('', { sid: undefined, sub }) });
    expect((await board(tenantB.cookie)).status).toBe(303);
    expect((await board(someoneElse.cookie)).status).toBe(200);
  });

  it('answers 400, no-store, to a logout token that is unsigned, misaddressed or not a logout event', async () => {
    const sid = randomUUID();
    const session = await handOff(await signed({ sid }));
    const now = Math.floor(Date.now() / 1000);
    const bad: Record<string, string> = {
      'no events claim': await logoutToken(sid, { events: undefined }),
      'another event': await logoutToken(sid, { events: { 'https://example.com/other-event': {} } }),
      'a nonce': await logoutToken(sid, { nonce: 'n-0S6_WzA2Mj' }),
      'neither sid nor sub': await logoutToken(sid, { sid: undefined }),
      'a sid that is no string': await logoutToken(sid, { sid: 42 }),
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
