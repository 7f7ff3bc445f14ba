import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { HANDOFF_SCRIPT_HASH } from '#lib/adapters/http/embed/handoff';
import { ID_TOKEN_CLAIMS } from '#lib/domain/id-token';
import { createSessionAs, demoKey } from '#test/support/create-session-as';
import { runtimeIdTokenKeys } from '#test/support/id-token-keys';
import { useKeyOwnerCast } from '#test/support/key-owner-cast';
import {
  apiCall,
  type CallResult,
  call,
  createSessionCall,
  ensureStatus,
  keyOwner,
  storeSession,
} from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';

const APP_URL = 'https://board.acme.test/embedded?from=embed';
const APP_ORIGIN = 'https://board.acme.test';
const OTHER_APP_URL = 'https://other-board.example.test/';

const runtime = useTestRuntime();
let keys: ReturnType<typeof runtimeIdTokenKeys>;
beforeAll(async () => {
  keys = runtimeIdTokenKeys(runtime);
  await putPublicBoard(runtime, 'board_with_app', 'org_demo', { name: 'Roadmap app', appUrl: APP_URL });
  await putPublicBoard(runtime, 'board_other_tenant_app', 'org_tenant_b', {
    name: 'Tenant B',
    appUrl: OTHER_APP_URL,
  });
});

const newSession = (extra: Record<string, unknown> = {}) =>
  createSessionAs<{ id: string; expiresAt: string }>(runtime, demoKey(runtime), {
    boardId: 'board_with_app',
    ...extra,
  });

/** The hidden fields of the hand-off form, and its action and method. */
function formOf(html: string) {
  const form = /<form id="embed-handoff" method="(\w+)" action="([^"]*)"/.exec(html);
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
  return { method: form?.[1], action: form?.[2]?.replace(/&amp;/g, '&'), fields };
}

async function verify(idToken: string, audience = APP_ORIGIN): Promise<JWTPayload> {
  const { payload } = await jwtVerify(idToken, createLocalJWKSet({ keys: await keys.publicKeys() }), {
    issuer: runtime.baseUrl,
    audience,
    algorithms: ['ES256'],
  });
  return payload;
}

async function handoffJson(token: string): Promise<{ url: string; idToken: string }> {
  const result = await call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
  ensureStatus(result, 200);
  return (result.body as { handoff: { url: string; idToken: string } }).handoff;
}

describe('GET /embed for a board with an application', () => {
  it('answers a page that POSTs id_token to the app URL by an auto-submitting form', async () => {
    const created = await newSession();
    const result = await call(runtime, `/embed?token=${created.token}`);
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const form = formOf(result.text);
    expect(form.method).toBe('post');
    expect(form.action).toBe(APP_URL);
    expect(Object.keys(form.fields)).toEqual(['id_token']);
    expect(await verify(form.fields.id_token as string)).toMatchObject({ sid: created.session.id });
    expect(result.text).toContain(`<script>`);
    expect(result.text).not.toContain(created.token);
  });

  it('passes theme and locale to the app when the embed URL gives them', async () => {
    const created = await newSession();
    const result = await call(runtime, `/embed?token=${created.token}&theme=dark&locale=de-AT`);
    expect(formOf(result.text).fields).toMatchObject({ theme: 'dark', locale: 'de' });
    expect(result.text).toContain('<html lang="de" data-theme="dark">');
  });

  it('sends the embed page’s headers, with a CSP whose form-action names only the app’s origin', async () => {
    const created = await newSession();
    const result = await call(runtime, `/embed?token=${created.token}`);
    expect(result.headers.get('cache-control')).toBe('no-store');
    expect(result.headers.get('referrer-policy')).toBe('no-referrer');
    expect(result.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = (result.headers.get('content-security-policy') ?? '').split('; ');
    expect(csp).toContain(`form-action ${APP_ORIGIN}`);
    expect(csp).toContain(`script-src ${HANDOFF_SCRIPT_HASH}`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('frame-ancestors https: http://localhost:* http://127.0.0.1:*');
    expect(csp.join('; ')).not.toContain('unsafe-inline');
  });

  it('frames the hand-off page under the board’s own origins when it has them', async () => {
    await putPublicBoard(runtime, 'board_framed_app', 'org_demo', {
      name: 'Framed',
      appUrl: APP_URL,
      embedOrigins: ['https://host.acme.test'],
    });
    const created = await newSession({ boardId: 'board_framed_app' });
    const result = await call(runtime, `/embed?token=${created.token}`);
    expect(result.headers.get('content-security-policy')).toContain('frame-ancestors https://host.acme.test');
  });

  it('answers {"handoff": {"url", "idToken"}} for Accept: application/json', async () => {
    const created = await newSession();
    const result = await call(runtime, `/embed?token=${created.token}`, {
      headers: { Accept: 'application/json' },
    });
    expect(Object.keys(result.body)).toEqual(['handoff']);
    const handoff = result.body.handoff as { url: string; idToken: string };
    expect(Object.keys(handoff).sort()).toEqual(['idToken', 'url']);
    expect(handoff.url).toBe(APP_URL);
    await expect(verify(handoff.idToken)).resolves.toBeDefined();
    expect(result.headers.get('content-security-policy')).toContain(`form-action ${APP_ORIGIN}`);
  });
});

describe('the ID token', () => {
  it('is an ES256 JWT with a published kid, carrying exactly the documented claims', async () => {
    const created = await newSession({
      firstName: 'Ada',
      lastName: 'Lovelace',
      avatarUrl: 'https://img.example.com/ada.png',
      plan: 'pro',
      metadata: { team: 'core', seats: 3 },
    });
    const { idToken } = await handoffJson(created.token);
    const [published] = await keys.publicKeys();
    expect(decodeProtectedHeader(idToken)).toEqual({ alg: 'ES256', typ: 'JWT', kid: published?.kid });
    const claims = await verify(idToken);
    expect(Object.keys(claims)).toEqual(ID_TOKEN_CLAIMS);
    expect(claims).toMatchObject({
      iss: runtime.baseUrl,
      aud: APP_ORIGIN,
      user_id: 'customer-42',
      email: 'ada@example.com',
      given_name: 'Ada',
      family_name: 'Lovelace',
      picture: 'https://img.example.com/ada.png',
      plan: 'pro',
      metadata: { team: 'core', seats: 3 },
      board_id: 'board_with_app',
      board_name: 'Roadmap app',
      sid: created.session.id,
    });
  });

  it('lives five minutes at most', async () => {
    const created = await newSession();
    const claims = decodeJwt((await handoffJson(created.token)).idToken);
    const now = Math.floor(Date.now() / 1000);
    expect(Math.abs((claims.iat as number) - now)).toBeLessThanOrEqual(5);
    expect((claims.exp as number) - (claims.iat as number)).toBe(300);
  });

  it('never outlives its session', async () => {
    const created = await newSession({ expiresInSeconds: 60 });
    const claims = decodeJwt((await handoffJson(created.token)).idToken);
    expect(claims.exp).toBeLessThanOrEqual(Math.floor(Date.parse(created.session.expiresAt) / 1000));
    expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(60);
  });

  it('carries the session’s own expiry as session_exp, in seconds of the service’s clock', async () => {
    const created = await newSession({ expiresInSeconds: 3600 });
    const claims = decodeJwt((await handoffJson(created.token)).idToken);
    const end = Date.parse(created.session.expiresAt) / 1000;
    // Never past the session's end, and at most a second before it.
    expect(claims.session_exp).toBeLessThanOrEqual(end);
    expect(claims.session_exp).toBeGreaterThan(end - 2);
    expect((claims.session_exp as number) - (claims.iat as number)).toBeGreaterThan(3590);
    expect(claims.exp).toBe((claims.iat as number) + 300);
  });

  it('has a new jti on every load', async () => {
    const created = await newSession();
    const ids = new Set<unknown>();
    for (let i = 0; i < 3; i++) ids.add(decodeJwt((await handoffJson(created.token)).idToken).jti);
    expect(ids.size).toBe(3);
  });

  it('gives one tenant’s user the same sub in every session, revealing neither user nor tenant', async () => {
    const first = decodeJwt((await handoffJson((await newSession()).token)).idToken);
    const second = decodeJwt((await handoffJson((await newSession({ plan: 'free' })).token)).idToken);
    expect(second.sub).toBe(first.sub);
    expect(first.sid).not.toBe(second.sid);
    expect(first.sub).not.toContain('customer-42');
    expect(first.sub).not.toContain('org_demo');
    const other = decodeJwt((await handoffJson((await newSession({ userId: 'customer-43' })).token)).idToken);
    expect(other.sub).not.toBe(first.sub);
  });

  it('gives the same userId of another tenant another sub', async () => {
    const ownerB = await keyOwner(runtime, 'owner-tenant-b', ['org_tenant_b']);
    const created = await createSessionCall(
      runtime,
      { boardId: 'board_other_tenant_app', userId: 'customer-42', email: 'ada@example.com' },
      { Authorization: `Bearer ${ownerB.apiKey}` },
    );
    const tokenB = (created.body as { sessionToken: string }).sessionToken;
    const { idToken } = await handoffJson(tokenB);
    const claimsB = await verify(idToken, 'https://other-board.example.test');
    const claimsA = decodeJwt((await handoffJson((await newSession()).token)).idToken);
    expect(claimsB.user_id).toBe(claimsA.user_id);
    expect(claimsB.sub).not.toBe(claimsA.sub);
  });

  it('carries a tid naming the tenant opaquely, announced in discovery’s claims_supported', async () => {
    const claims = decodeJwt((await handoffJson((await newSession()).token)).idToken);
    expect(claims.tid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(claims.tid).not.toContain('org_demo');
    expect(claims.tid).not.toBe(claims.sub);
    const discovery = ensureStatus(await call(runtime, '/.well-known/openid-configuration'), 200);
    expect(discovery.body.claims_supported).toContain('tid');
  });

  it('holds neither the session token nor its hash', async () => {
    const created = await newSession();
    const { idToken } = await handoffJson(created.token);
    const decoded = JSON.stringify(decodeJwt(idToken)) + JSON.stringify(decodeProtectedHeader(idToken));
    const { createHash } = await import('node:crypto');
    expect(decoded).not.toContain(created.token);
    expect(decoded).not.toContain(createHash('sha256').update(created.token).digest('hex'));
    expect(idToken).not.toContain(created.token);
  });
});

describe('refused links of a board with an application', () => {
  const JWT = /eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/;

  function expectRefusedWithoutToken(result: CallResult, status: number, text: string) {
    expect(result.status).toBe(status);
    expect(result.text).toContain(text);
    expect(result.text).not.toMatch(JWT);
    expect(result.text).not.toContain('id_token');
    expect(result.headers.get('content-security-policy')).toContain("form-action 'none'");
  }

  it('refuses an expired session as before, minting no token', async () => {
    const token = randomBytes(24).toString('base64url');
    await storeSession(runtime, token, {
      boardId: 'board_with_app',
      orgId: 'org_demo',
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    expectRefusedWithoutToken(
      await call(runtime, `/embed?token=${token}`),
      401,
      'Your access to this board has ended.',
    );
    const json = await call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
    expect(json.status).toBe(401);
    expect(json.body).not.toHaveProperty('handoff');
  });

  it('refuses a revoked session as before, minting no token', async () => {
    const created = await newSession();
    await apiCall(
      runtime,
      runtime.demo?.apiKey as string,
      'POST',
      `/api/embed/sessions/${created.session.id}/revoke`,
    );
    expectRefusedWithoutToken(
      await call(runtime, `/embed?token=${created.token}`),
      401,
      'Your access to this board was withdrawn.',
    );
  });

  it('refuses an unknown token as before, minting no token', async () => {
    const result = await call(runtime, `/embed?token=${randomBytes(24).toString('base64url')}`);
    expect(result.status).toBe(401);
    expect(result.text).not.toMatch(JWT);
  });

  it('refuses a link bound to another browser as before, minting no token', async () => {
    const created = await newSession({ bindToBrowser: true });
    const first = await call(runtime, `/embed?token=${created.token}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('set-cookie')).toContain('__Host-embed_binding=');
    const elsewhere = await call(runtime, `/embed?token=${created.token}`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.text).not.toMatch(JWT);
  });
});

describe('GET /embed for a board without an application', () => {
  it('keeps the built-in page: no form, no token, form-action none', async () => {
    const created = await newSession({ boardId: runtime.demo?.publicBoardId });
    const result = await call(runtime, `/embed?token=${created.token}`);
    expect(result.status).toBe(200);
    expect(result.text).toContain('id="embed-root"');
    expect(result.text).not.toContain('embed-handoff');
    expect(result.text).not.toMatch(/eyJ[A-Za-z0-9_-]+\./);
    expect(result.headers.get('content-security-policy')).toContain("form-action 'none'");
    const json = await call(runtime, `/embed?token=${created.token}`, {
      headers: { Accept: 'application/json' },
    });
    expect(Object.keys(json.body).sort()).toEqual(['board', 'session']);
  });
});

describe('the ID token’s subject and tenant, per tenant', () => {
  const cast = useKeyOwnerCast(runtime, 'handoff-');
  /** The claims the board application receives for a session `who` creates on `boardId`. */
  async function claimsFor(who: { apiKey: string }, fields: Record<string, unknown> = {}) {
    const created = await createSessionAs(runtime, who, { boardId: 'board_with_app', ...fields });
    return decodeJwt((await handoffJson(created.token)).idToken);
  }

  it('gives one organization’s user one sub and tid across sessions, boards and the keys of its members', async () => {
    await putPublicBoard(runtime, 'board_with_app_2', 'org_demo', { appUrl: APP_URL });
    const byOwner = await claimsFor(cast.owner);
    const again = await claimsFor(cast.owner, { plan: 'free' });
    const byColleague = await claimsFor(cast.colleague);
    const onAnotherBoard = await claimsFor(cast.colleague, { boardId: 'board_with_app_2' });
    for (const claims of [again, byColleague, onAnotherBoard]) {
      expect(claims.sub).toBe(byOwner.sub);
      expect(claims.tid).toBe(byOwner.tid);
    }
    expect(new Set([byOwner, again, byColleague, onAnotherBoard].map((claims) => claims.sid)).size).toBe(4);
  });

  it('gives a key owner outside the board’s organization one sub across its sessions and its keys', async () => {
    const first = await claimsFor(cast.outsider);
    const secondKey = await claimsFor(cast.outsiderSecondKey);
    expect(secondKey.sub).toBe(first.sub);
    expect(secondKey.tid).toBe(first.tid);
  });

  it('gives another tenant’s customer-42 on the organization’s PUBLIC board another sub and tid', async () => {
    const boardOwners = await claimsFor(cast.owner, { userId: 'customer-42' });
    const outsiders = await claimsFor(cast.outsider, { userId: 'customer-42' });
    expect(outsiders.user_id).toBe(boardOwners.user_id);
    expect(outsiders.sub).not.toBe(boardOwners.sub);
    expect(outsiders.tid).not.toBe(boardOwners.tid);
    expect(`${outsiders.sub}${outsiders.tid}`).not.toContain('outsider');
  });
});
