import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeAllEvent } from '#lib/adapters/dynamodb/change-events';
import { destinationPost } from '#lib/adapters/outbound-http/destination-post';
import type { Board } from '#lib/domain/board';
import { PUBLIC_DESTINATIONS } from '#lib/domain/destinations';
import type { SessionEventType } from '#lib/domain/events';
import type { IdTokenSigner, PairwiseSubjects } from '#lib/domain/ports';
import type { SessionView } from '#lib/domain/session';
import { createMetrics } from '#lib/platform/metrics';
import {
  attemptLogout,
  BackChannelLogoutSink,
  LOGOUT_EXHAUSTED_METRIC,
  LOGOUT_REFUSED_METRIC,
  type LogoutDelivery,
  type LogoutDeps,
  logoutTargetOf,
} from '#lib/use-cases/back-channel-logout';
import type { HttpPost } from '#lib/use-cases/webhook-delivery';
import { FakeBoards, fixedClock, sequenceRandom, VISIBLE_SUBJECTS } from '#test/support/fakes';
import { APP_BOARD } from '#test/support/fixtures';
import { LOGOUT_CANDIDATES } from '#test/support/logout-events';
import { memoryLogger } from '#test/support/logs';
import { routedEvent } from '#test/support/webhook-receiver';

const RULE = { allowLoopbackHttp: false };
const BOARD = APP_BOARD;

/** A signer that shows what it was asked to sign: the header and claims, base64url-encoded, unsigned. */
const tokens: IdTokenSigner & PairwiseSubjects = {
  sign: async (claims) =>
    `${Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'events' in claims ? 'logout+jwt' : 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`,
  ...VISIBLE_SUBJECTS,
};

function harness(options: { boards?: Board[]; post?: HttpPost; retrySeconds?: number[] } = {}) {
  const scheduled: Array<{ delivery: LogoutDelivery; delay: number }> = [];
  const posted: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
  const metricLines: string[] = [];
  const { logger, lines } = memoryLogger();
  const deps: LogoutDeps = {
    boards: new FakeBoards(options.boards ?? [BOARD]),
    tokens: async () => tokens,
    issuer: 'https://embed.example.com',
    stageAppUrl: undefined,
    appUrlRule: RULE,
    scheduler: { schedule: async (delivery, delay) => void scheduled.push({ delivery, delay }) },
    post:
      options.post ??
      (async (url, headers, body) => {
        posted.push({ url, headers, body });
        return 200;
      }),
    clock: fixedClock('2026-03-01T10:00:00.000Z'),
    random: sequenceRandom(),
    logger,
    metrics: createMetrics({ service: 'test', sink: (line) => metricLines.push(line) }),
    retrySeconds: options.retrySeconds ?? [1, 2],
  };
  return { deps, scheduled, posted, metricLines, lines };
}

const view = (boardId = BOARD.boardId) =>
  ({ id: 'sess-1', boardId, userId: 'customer-42' }) as unknown as SessionView;
const ended = (type: SessionEventType, boardId?: string) =>
  routedEvent(view(boardId), type, { userId: 'owner-a' });
const delivery: LogoutDelivery = {
  eventId: 'evt_1',
  sessionId: 'sess-1',
  boardId: BOARD.boardId,
  userId: 'customer-42',
  attempt: 0,
};

describe('logoutTargetOf', () => {
  it('is the board’s logoutUrl, for the origin of its application', () => {
    expect(logoutTargetOf(BOARD, undefined, RULE)).toEqual({
      logoutUrl: BOARD.logoutUrl,
      audience: 'https://board.acme.com',
    });
  });

  it('takes the stage’s default application as the audience when the board has none of its own', () => {
    const { appUrl: _, ...noApp } = BOARD;
    expect(logoutTargetOf(noApp, 'https://stage-app.acme.com/in', RULE)?.audience).toBe(
      'https://stage-app.acme.com',
    );
  });

  it('is none without a logoutUrl, without an application, or with a logoutUrl the rule refuses', () => {
    const { logoutUrl: _l, ...noLogout } = BOARD;
    const { appUrl: _a, ...noApp } = BOARD;
    expect(logoutTargetOf(noLogout, undefined, RULE)).toBeUndefined();
    expect(logoutTargetOf(noApp, undefined, RULE)).toBeUndefined();
    expect(
      logoutTargetOf({ ...BOARD, logoutUrl: 'http://board.acme.com/out' }, undefined, RULE),
    ).toBeUndefined();
  });
});

describe('BackChannelLogoutSink', () => {
  it('schedules one logout for each revoked or expired session of a board with a logout target', async () => {
    const { deps, scheduled } = harness({
      boards: [BOARD, { ...BOARD, boardId: 'board-plain', logoutUrl: undefined }],
    });
    await new BackChannelLogoutSink(deps).publish(
      LOGOUT_CANDIDATES.map(([type, boardId]) => ended(type, boardId)),
    );
    expect(scheduled.map((s) => [s.delivery.boardId, s.delivery.userId, s.delay])).toEqual([
      ['board-1', 'customer-42', 0],
      ['board-1', 'customer-42', 0],
    ]);
  });

  it('carries the session’s tenant, from which the logout token’s sub is derived', async () => {
    const { deps, scheduled } = harness();
    const tenant = { kind: 'keyOwner', id: 'owner-b' } as const;
    await new BackChannelLogoutSink(deps).publish([
      routedEvent(view(), 'session.revoked', { userId: 'owner-b', tenant }),
    ]);
    expect(scheduled.map((s) => s.delivery.tenant)).toEqual([tenant]);
  });
});

describe('attemptLogout', () => {
  it('POSTs a form with a logout token naming the session, its pairwise subject and the logout event', async () => {
    const { deps, posted } = harness();
    expect(await attemptLogout(deps, delivery)).toBe('delivered');
    const [request] = posted;
    expect(request?.url).toBe(BOARD.logoutUrl);
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const token = String(new URLSearchParams(request?.body).get('logout_token'));
    expect(decodeProtectedHeader(token).typ).toBe('logout+jwt');
    const iat = Date.parse('2026-03-01T10:00:00.000Z') / 1000;
    expect(decodeJwt(token)).toEqual({
      iss: 'https://embed.example.com',
      aud: 'https://board.acme.com',
      sub: 'sub(organization:org-a,customer-42)',
      sid: 'sess-1',
      iat,
      exp: iat + 120,
      jti: expect.any(String),
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    });
  });

  it('derives the sub from the session’s tenant, as the hand-off did, not from the board’s organization', async () => {
    const { deps, posted } = harness();
    await attemptLogout(deps, { ...delivery, tenant: { kind: 'keyOwner', id: 'owner-b' } });
    const token = String(new URLSearchParams(posted[0]?.body).get('logout_token'));
    expect(decodeJwt(token).sub).toBe('sub(keyOwner:owner-b,customer-42)');
  });

  it('takes a logout queued before tenants were recorded as the board organization’s, as its session was', async () => {
    const { deps, posted } = harness();
    const { tenant: _, ...queuedBefore } = { ...delivery, tenant: undefined };
    await attemptLogout(deps, queuedBefore);
    const token = String(new URLSearchParams(posted[0]?.body).get('logout_token'));
    expect(decodeJwt(token).sub).toBe(`sub(organization:${BOARD.orgId},customer-42)`);
  });

  it('schedules no retry once a failed logout is retried and the application answers 2xx', async () => {
    let answers = 0;
    const { deps, scheduled } = harness({ post: async () => (++answers === 1 ? 500 : 200) });
    expect(await attemptLogout(deps, delivery)).toBe('retrying');
    expect(scheduled).toEqual([{ delivery: { ...delivery, attempt: 1 }, delay: 1 }]);
    expect(await attemptLogout(deps, { ...delivery, attempt: 1 })).toBe('delivered');
    // The second attempt answered 2xx: nothing more is scheduled, so no third attempt can come.
    expect(scheduled).toHaveLength(1);
  });

  it('retries a failed attempt after its backoff, and counts one given up after the last', async () => {
    const { deps, scheduled, metricLines } = harness({ post: async () => 503, retrySeconds: [1] });
    expect(await attemptLogout(deps, delivery)).toBe('retrying');
    expect(scheduled).toEqual([{ delivery: { ...delivery, attempt: 1 }, delay: 1 }]);
    expect(await attemptLogout(deps, { ...delivery, attempt: 1 })).toBe('exhausted');
    expect(metricLines.join('\n')).toContain(LOGOUT_EXHAUSTED_METRIC);
  });

  it('counts and logs a logout whose destination is refused as it is sent, and never tries it again', async () => {
    const { deps, scheduled, metricLines, lines } = harness({
      post: async () => ({ refused: 'board.acme.com resolves to 169.254.169.254, a link-local address' }),
    });
    expect(await attemptLogout(deps, delivery)).toBe('refused');
    expect(scheduled).toEqual([]);
    expect(metricLines.join('\n')).toContain(LOGOUT_REFUSED_METRIC);
    expect(lines()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'back-channel logout refused: its destination is not on the public internet; not sent',
        sessionId: 'sess-1',
        reason: 'board.acme.com resolves to 169.254.169.254, a link-local address',
      }),
    );
  });

  it('sends the real request nowhere when the board’s logoutUrl resolves inside the network', async () => {
    const { deps, scheduled } = harness({
      post: destinationPost(PUBLIC_DESTINATIONS, {
        resolve: async () => [{ address: '10.0.0.5', family: 4 }],
      }),
    });
    expect(await attemptLogout(deps, delivery)).toBe('refused');
    expect(scheduled).toEqual([]);
  });

  it('sends nothing more once the board’s logoutUrl is cleared', async () => {
    const { deps, posted } = harness({ boards: [{ ...BOARD, logoutUrl: undefined }] });
    expect(await attemptLogout(deps, delivery)).toBe('endpoint-deleted');
    expect(posted).toEqual([]);
  });

  it('never logs the token', async () => {
    const { deps, lines, posted } = harness();
    await attemptLogout(deps, delivery);
    const token = String(new URLSearchParams(posted[0]?.body).get('logout_token'));
    const logged = JSON.stringify(lines());
    expect(logged).toContain('back-channel logout delivered');
    expect(logged).not.toContain(String(token.split('.')[1]));
  });
});

describe('a logout endpoint that redirects', () => {
  let server: Server;
  let url: string;
  let followed = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/target') followed += 1;
      res.writeHead(req.url === '/target' ? 200 : 302, { Location: '/target' }).end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/logout`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is a failed attempt: the redirect is not followed', async () => {
    const loopback = { ...BOARD, appUrl: 'http://127.0.0.1:1/handoff', logoutUrl: url };
    const { deps, scheduled } = harness({
      boards: [loopback],
      post: destinationPost({ allowLoopback: true }),
    });
    deps.appUrlRule = { allowLoopbackHttp: true };
    expect(await attemptLogout(deps, delivery)).toBe('retrying');
    expect(scheduled).toHaveLength(1);
    expect(followed).toBe(0);
  });
});

describe('BackChannelLogoutSink and revoke-all', () => {
  it('schedules nothing for a sessions.revoked: it names no session to log out', async () => {
    const { deps, scheduled } = harness({ boards: [BOARD] });
    const notice = { scope: { boardId: BOARD.boardId }, revoked: 4, writtenAt: '2026-03-01T12:00:00.000Z' };
    await new BackChannelLogoutSink(deps).publish([
      revokeAllEvent({ id: 'e1', at: notice.writtenAt, byUserId: 'owner-a', byKeyId: 'key_a' }, notice),
    ]);
    expect(scheduled).toEqual([]);
  });
});
