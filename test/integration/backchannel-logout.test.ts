import { randomBytes, randomUUID } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Board } from '#lib/domain/board';
import { validBody } from '#test/support/fixtures';
import {
  apiCall,
  call,
  type KeyOwnerFixture,
  keyOwner,
  putBoard,
  storeSession,
  testTarget,
} from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '#test/support/webhook-receiver';
import { type RunningBoardApp, startBoardApp } from '../../examples/board-app/server';

/**
 * OpenID Connect Back-Channel Logout over HTTP on the local runtime: the reference board application runs
 * beside it (port 0), receives the hand-off, and ends its own session when the service POSTs it a logout
 * token after the embed session is revoked or expires. A plain receiver stands in for an application
 * that fails, and for the boards that must be sent nothing. Retries follow WEBHOOK_RETRY_SECONDS (1,2,4).
 */
const runtime = useTestRuntime();
let app: RunningBoardApp;
let receiver: WebhookReceiver;
let demo: KeyOwnerFixture;
/** When set, the app's clock stands still there: its session then never ends by itself, only by a logout. */
let appClockStoppedAt: number | undefined;
/** A key owner of no organization: its sessions on org_demo's public boards are its own tenant's. */
let outsider: KeyOwnerFixture;

const APP_BOARD = `board_bcl_app_${randomUUID().slice(0, 8)}`;
const FLAKY_BOARD = `board_bcl_flaky_${randomUUID().slice(0, 8)}`;
const NO_LOGOUT_BOARD = `board_bcl_none_${randomUUID().slice(0, 8)}`;
const NO_APP_BOARD = `board_bcl_noapp_${randomUUID().slice(0, 8)}`;
const TENANTS_BOARD = `board_bcl_tenants_${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  demo = {
    userId: String(runtime.demo?.userId),
    keyId: String(runtime.demo?.keyId),
    apiKey: String(runtime.demo?.apiKey),
  };
  app = await startBoardApp({ port: 0 });
  app.serve({ issuer: runtime.baseUrl, now: () => new Date(appClockStoppedAt ?? Date.now()) });
  // Fails the first logout to /flaky, answers 200 to everything else.
  receiver = await startWebhookReceiver((request, nth) =>
    request.path === '/flaky' && nth === 1 ? 500 : 200,
  );
  const board = (boardId: string, extra: Partial<Board>): Board => ({
    boardId,
    orgId: 'org_demo',
    visibility: 'PUBLIC',
    name: boardId,
    ...extra,
  });
  await putBoard(
    runtime,
    board(APP_BOARD, { appUrl: app.appUrl, logoutUrl: `${app.origin}/backchannel-logout` }),
  );
  await putBoard(
    runtime,
    board(FLAKY_BOARD, { appUrl: `${receiver.url}/handoff`, logoutUrl: `${receiver.url}/flaky` }),
  );
  await putBoard(runtime, board(NO_LOGOUT_BOARD, { appUrl: `${receiver.url}/handoff` }));
  await putBoard(runtime, board(NO_APP_BOARD, { logoutUrl: `${receiver.url}/no-app` }));
  await putBoard(
    runtime,
    board(TENANTS_BOARD, { appUrl: `${receiver.url}/handoff`, logoutUrl: `${receiver.url}/tenants` }),
  );
  outsider = await keyOwner(runtime, `bcl-outsider-${randomUUID().slice(0, 8)}`);
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

async function createSession(
  boardId: string,
  who: KeyOwnerFixture = demo,
  userId = `user-${randomUUID()}`,
): Promise<{ id: string; token: string }> {
  const created = await apiCall(runtime, who.apiKey, 'POST', '/api/embed/sessions', {
    ...validBody({ boardId, userId }),
  });
  expect(created.status, created.text).toBe(201);
  return { id: (created.body.session as { id: string }).id, token: String(created.body.sessionToken) };
}

async function handOff(token: string): Promise<{ url: string; idToken: string }> {
  const result = await call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
  expect(result.status, result.text).toBe(200);
  return (result.body as { handoff: { url: string; idToken: string } }).handoff;
}

/** Signs in to the reference application with the session's hand-off; answers its session cookie. */
async function signInToApp(token: string): Promise<string> {
  const { url, idToken } = await handOff(token);
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ id_token: idToken }).toString(),
    redirect: 'manual',
  });
  expect(answer.status).toBe(303);
  const cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  expect(cookie).toMatch(/^__Host-board-session=/);
  return cookie;
}

const boardPage = (cookie: string) =>
  fetch(`${app.origin}/board`, { redirect: 'manual', headers: { Cookie: cookie } });

/** Runs the change feed and the expiry sweep until the app refuses the cookie; fails after `within`. */
function untilAppRefuses(cookie: string, within = 15_000): Promise<Response> {
  return vi.waitFor(
    async () => {
      await runtime.events?.poll();
      await runtime.events?.sweep();
      const page = await boardPage(cookie);
      if (page.status === 200) {
        await page.body?.cancel();
        throw new Error('the application still serves the board');
      }
      return page;
    },
    { timeout: within, interval: 200 },
  );
}

async function revoke(sessionId: string, who: KeyOwnerFixture = demo) {
  const result = await apiCall(runtime, who.apiKey, 'POST', `/api/embed/sessions/${sessionId}/revoke`);
  expect(result.status, result.text).toBeLessThan(300);
}

/** Polls the change feed until the receiver has `count` requests at `path`. */
function received(path: string, count: number, within = 15_000): Promise<ReceivedWebhook[]> {
  return vi.waitFor(
    async () => {
      await runtime.events?.poll();
      const found = receiver.received.filter((r) => r.path === path);
      if (found.length < count) throw new Error(`expected ${count} requests at ${path}, got ${found.length}`);
      return found;
    },
    { timeout: within, interval: 100 },
  );
}

const logoutTokenOf = (request: ReceivedWebhook) =>
  String(new URLSearchParams(request.body).get('logout_token'));

/** Verifies a logout token as an application would: the keys found from the discovery document alone. */
async function verifyFromDiscovery(token: string, audience: string): Promise<JWTPayload> {
  const discovery = await call(runtime, '/.well-known/openid-configuration');
  expect(discovery.body).toMatchObject({
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  });
  const jwks = createRemoteJWKSet(new URL(String(discovery.body.jwks_uri)));
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer: String(discovery.body.issuer),
    audience,
    algorithms: ['ES256'],
    typ: 'logout+jwt',
  });
  expect(protectedHeader.kid).toBeTruthy();
  return payload;
}

describe.skipIf(testTarget() === 'assembly')('back-channel logout to board applications', () => {
  it('ends the application’s session when the embed session is revoked through the API', async () => {
    const session = await createSession(APP_BOARD);
    const cookie = await signInToApp(session.token);
    const before = await boardPage(cookie);
    expect(before.status).toBe(200);
    await before.body?.cancel();

    await revoke(session.id);
    const after = await untilAppRefuses(cookie);
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toContain('/embed/ended?reason=revoked');
  });

  it('ends the application’s session when the embed session expires', async () => {
    const token = randomBytes(24).toString('base64url');
    await storeSession(runtime, token, {
      boardId: APP_BOARD,
      orgId: 'org_demo',
      expiresAt: new Date(Date.now() + 3_000).toISOString(),
      createdByUserId: demo.userId,
      createdByKeyId: demo.keyId,
    });
    // The change feed records the creation (and notes the expiry for the sweep).
    await runtime.events?.poll();
    const cookie = await signInToApp(token);
    const before = await boardPage(cookie);
    expect(before.status).toBe(200);
    await before.body?.cancel();

    // The app would end its session at session_exp by itself: stop its clock, so only the logout can.
    appClockStoppedAt = Date.now();
    try {
      const after = await untilAppRefuses(cookie);
      expect(after.status).toBe(303);
      expect(after.headers.get('location')).toContain('/embed/ended?reason=revoked');
    } finally {
      appClockStoppedAt = undefined;
    }
  });

  it('sends a logout token that verifies with jose from the discovery document, as the ID token’s sid, sub and aud', async () => {
    const session = await createSession(FLAKY_BOARD);
    const idToken = decodeJwt((await handOff(session.token)).idToken);
    await revoke(session.id);
    const [request] = await received('/flaky', 1);
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const token = logoutTokenOf(request as ReceivedWebhook);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', typ: 'logout+jwt' });
    const claims = await verifyFromDiscovery(token, receiver.url);
    expect(Object.keys(claims).sort()).toEqual(['aud', 'events', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);
    expect(claims).toMatchObject({
      iss: idToken.iss,
      aud: idToken.aud,
      sub: idToken.sub,
      sid: session.id,
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBeLessThanOrEqual(120);
  });

  it('names each tenant’s user by the sub its ID token had: another tenant’s customer-42 is another sub', async () => {
    const userId = `customer-${randomUUID().slice(0, 8)}`;
    const member = await createSession(TENANTS_BOARD, demo, userId);
    const other = await createSession(TENANTS_BOARD, outsider, userId);
    const idTokens = {
      [member.id]: decodeJwt((await handOff(member.token)).idToken),
      [other.id]: decodeJwt((await handOff(other.token)).idToken),
    };
    await revoke(member.id);
    await revoke(other.id, outsider);
    const logouts = (await received('/tenants', 2)).map((r) => decodeJwt(logoutTokenOf(r)));
    expect(logouts.map((claims) => claims.sid).sort()).toEqual([member.id, other.id].sort());
    for (const claims of logouts) expect(claims.sub).toBe(idTokens[String(claims.sid)]?.sub);
    expect(idTokens[member.id]?.sub).not.toBe(idTokens[other.id]?.sub);
  });

  it('retries a logout the application failed, with a fresh token, until it answers 2xx', async () => {
    // The previous test's logout failed its first attempt (500): the retry comes a second later.
    const attempts = await received('/flaky', 2);
    const [first, second] = attempts.map(logoutTokenOf).map((token) => decodeJwt(token));
    expect(second?.sid).toBe(first?.sid);
    expect(second?.jti).not.toBe(first?.jti);
    // That the 200 of the second attempt ends the retries is proven on the injected scheduler
    // (test/unit/lib/use-cases/back-channel-logout.test.ts), not by waiting here for a third that must not come.
  });

  it('sends nothing for a board without a logoutUrl, nor for one without an application', async () => {
    const silent = await createSession(NO_LOGOUT_BOARD);
    const noApp = await createSession(NO_APP_BOARD);
    await revoke(silent.id);
    await revoke(noApp.id);
    // A control revocation that is sent: once it arrives, the two above were processed before it.
    const control = await createSession(FLAKY_BOARD);
    await revoke(control.id);
    const sids = async () => (await received('/flaky', 3)).map((r) => decodeJwt(logoutTokenOf(r)).sid);
    expect(await sids()).toContain(control.id);
    const all = receiver.received.map((r) => new URLSearchParams(r.body).get('logout_token'));
    const named = all.filter((t): t is string => t !== null).map((t) => decodeJwt(t).sid);
    expect(named).not.toContain(silent.id);
    expect(named).not.toContain(noApp.id);
    expect(receiver.received.filter((r) => r.path === '/no-app' || r.path === '/handoff')).toEqual([]);
  });
});
