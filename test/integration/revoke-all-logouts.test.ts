import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '#admin/cli';
import { createSessionAs } from '#test/support/create-session-as';
import { useKeyOwnerCast } from '#test/support/key-owner-cast';
import { apiCall, call, ensureStatus, type KeyOwnerFixture, testTarget } from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { startWebhookReceiver, type WebhookReceiver } from '#test/support/webhook-receiver';

/**
 * Every revocation sends its logouts: a revoke-all of each scope (and an operator's cut-off of a user
 * across tenants, and of the whole stage) ends the board applications' sessions it covers, one
 * back-channel logout per covered session whose board has a logout URL, and none for a session it does
 * not cover. Over HTTP on the local runtime (dynalite, or DynamoDB Local with TEST_DYNAMODB=dynamodb-local):
 * the change feed starts the fan-out, whose steps run as on AWS's delivery queue. A receiver stands in for
 * the applications, one path per board; the count is taken once every logout the runtime scheduled is done.
 */
const runtime = useTestRuntime();
const { owner, colleague, outsider, otherTenant } = useKeyOwnerCast(runtime, 'ral-');
let receiver: WebhookReceiver;

const suffix = randomUUID().slice(0, 8);
/** org_demo's public boards: two with a logout URL (one path each at the receiver), one without. */
const BOARD_A = `board_ral_a_${suffix}`;
const BOARD_B = `board_ral_b_${suffix}`;
const BOARD_SILENT = `board_ral_silent_${suffix}`;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  const app = { appUrl: `${receiver.url}/handoff` };
  await putPublicBoard(runtime, BOARD_A, 'org_demo', { ...app, logoutUrl: `${receiver.url}/logout/a` });
  await putPublicBoard(runtime, BOARD_B, 'org_demo', { ...app, logoutUrl: `${receiver.url}/logout/b` });
  await putPublicBoard(runtime, BOARD_SILENT, 'org_demo', app);
});
afterAll(async () => {
  await receiver?.close();
});

interface Created {
  id: string;
  token: string;
}

async function create(who: KeyOwnerFixture, boardId: string, userId: string): Promise<Created> {
  const { session, token } = await createSessionAs<{ id: string }>(runtime, who, { boardId, userId });
  return { id: session.id, token };
}

/** The `sub` the board application was handed for a session (the ID token of its hand-off). */
async function handedSub(session: Created): Promise<unknown> {
  const result = await call(runtime, `/embed?token=${session.token}`, {
    headers: { Accept: 'application/json' },
  });
  return decodeJwt((ensureStatus(result, 200).body.handoff as { idToken: string }).idToken).sub;
}

/** The sessions named by the logouts received so far, with how often each was named. */
function logoutCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of receiver.received) {
    if (!request.path.startsWith('/logout/')) continue;
    const sid = String(decodeJwt(String(new URLSearchParams(request.body).get('logout_token'))).sid);
    counts.set(sid, (counts.get(sid) ?? 0) + 1);
  }
  return counts;
}

/** The logouts that named `sessions`, once the change feed has run and every logout scheduled is done. */
async function logoutsOf(sessions: readonly Created[]): Promise<Record<string, number>> {
  await runtime.events?.poll();
  await runtime.logoutsSettled?.();
  const counts = logoutCounts();
  return Object.fromEntries(sessions.map((session) => [session.id, counts.get(session.id) ?? 0]));
}

const once = (sessions: readonly Created[]) => Object.fromEntries(sessions.map((s) => [s.id, 1]));
const never = (sessions: readonly Created[]) => Object.fromEntries(sessions.map((s) => [s.id, 0]));

async function revokeAll(who: KeyOwnerFixture, body: Record<string, string>): Promise<number> {
  const result = ensureStatus(
    await apiCall(runtime, who.apiKey, 'POST', '/api/embed/sessions/revoke', body),
    200,
  );
  return result.body.revoked as number;
}

const admin = (...args: string[]) =>
  runAdmin(args, { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, AWS_REGION: 'local' }) as Promise<{
    revoked: number;
  }>;

describe.skipIf(testTarget() === 'assembly')('back-channel logouts of a revoke-all', () => {
  it('{userId}: logs out the tenant’s sessions of the user on every board, once each, and no other tenant’s', async () => {
    const user = `ral-user-${suffix}`;
    const covered = [
      await create(owner, BOARD_A, user),
      await create(colleague, BOARD_B, user),
      await create(owner, BOARD_B, user),
    ];
    const silent = await create(owner, BOARD_SILENT, user);
    const untouched = [
      await create(outsider, BOARD_A, user),
      await create(otherTenant, BOARD_A, user),
      await create(owner, BOARD_A, `${user}-other`),
    ];
    expect(await revokeAll(owner, { userId: user })).toBe(covered.length + 1);
    expect(await logoutsOf([...covered, silent, ...untouched])).toEqual({
      ...once(covered),
      ...never([silent, ...untouched]),
    });
  });

  it('{userId, boardId}: logs out the user’s sessions on that board only, each with the sid it names', async () => {
    const user = `ral-board-user-${suffix}`;
    const covered = [await create(owner, BOARD_A, user), await create(colleague, BOARD_A, user)];
    const untouched = [
      await create(owner, BOARD_B, user),
      await create(colleague, BOARD_B, user),
      await create(outsider, BOARD_A, user),
    ];
    expect(await revokeAll(owner, { userId: user, boardId: BOARD_A })).toBe(covered.length);
    expect(await logoutsOf([...covered, ...untouched])).toEqual({ ...once(covered), ...never(untouched) });
  });

  it('{boardId}: logs out every tenant’s sessions on the board, each with the sub its own tenant was handed', async () => {
    const board = `board_ral_whole_${suffix}`;
    await putPublicBoard(runtime, board, 'org_demo', {
      appUrl: `${receiver.url}/handoff`,
      logoutUrl: `${receiver.url}/logout/whole`,
    });
    const user = `ral-whole-${suffix}`;
    const covered = [
      await create(owner, board, user),
      await create(outsider, board, user),
      await create(otherTenant, board, `${user}-2`),
    ];
    const untouched = [await create(owner, BOARD_A, user)];
    const subs = await Promise.all(covered.map(handedSub));
    expect(await revokeAll(owner, { boardId: board })).toBe(covered.length);
    expect(await logoutsOf([...covered, ...untouched])).toEqual({ ...once(covered), ...never(untouched) });
    const logoutSubs = new Map(
      receiver.received
        .filter((request) => request.path === '/logout/whole')
        .map((request) => decodeJwt(String(new URLSearchParams(request.body).get('logout_token'))))
        .map((claims) => [claims.sid, claims.sub]),
    );
    expect(covered.map((session) => logoutSubs.get(session.id))).toEqual(subs);
    expect(subs[0]).not.toBe(subs[1]);
  });

  it('sends nothing again for sessions an earlier revoke-all ended: a second call of the same scope', async () => {
    const user = `ral-twice-${suffix}`;
    const first = [await create(owner, BOARD_A, user)];
    await revokeAll(owner, { userId: user });
    expect(await logoutsOf(first)).toEqual(once(first));
    const later = [await create(owner, BOARD_A, user)];
    expect(await revokeAll(owner, { userId: user })).toBe(1);
    expect(await logoutsOf([...first, ...later])).toEqual({ ...once(first), ...once(later) });
  });

  it('an operator’s cut-off of a user across tenants logs out every tenant’s sessions of that user id', async () => {
    const user = `ral-operator-user-${suffix}`;
    const covered = [await create(owner, BOARD_A, user), await create(outsider, BOARD_B, user)];
    const untouched = [await create(owner, BOARD_A, `${user}-other`)];
    const { revoked } = await admin(
      'revoke-all-sessions',
      '--user',
      user,
      '--before',
      new Date().toISOString(),
    );
    expect(revoked).toBe(covered.length);
    expect(await logoutsOf([...covered, ...untouched])).toEqual({ ...once(covered), ...never(untouched) });
  });

  it('the stage cut-off logs out every session still open on a board with a logout URL, and none twice', async () => {
    const open = [
      await create(owner, BOARD_A, `ral-stage-1-${suffix}`),
      await create(outsider, BOARD_B, `ral-stage-2-${suffix}`),
    ];
    const before = logoutCounts();
    await admin('revoke-all-sessions', '--before', new Date().toISOString());
    await logoutsOf(open);
    const after = logoutCounts();
    for (const session of open) expect(after.get(session.id)).toBe(1);
    // Every session an earlier test's revoke-all ended was logged out then, and not again now.
    for (const [sid, count] of before) expect(after.get(sid)).toBe(count);
    expect([...after.values()].every((count) => count === 1)).toBe(true);
  });
});
