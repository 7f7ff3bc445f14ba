import { describe, expect, it } from 'vitest';
import { REVOKE_CONCURRENCY, revokeUserSessions } from '#lib/use-cases/revoke-user-sessions';
import { FakeBoards, FakeMemberships, FakeSessions, fixedClock } from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

const NOW = '2026-01-05T00:00:00.000Z';
const CALLER = { userId: 'owner-1', keyId: 'key_1' };

function sessions(count: number, overrides: Parameters<typeof storedSession>[0] = {}) {
  return Array.from({ length: count }, (_, i) =>
    storedSession({
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      orgId: 'org-a',
      boardId: 'board-a',
      userId: 'customer-1',
      ...overrides,
    }),
  );
}

function setup(all: ReturnType<typeof sessions>) {
  return {
    sessions: new FakeSessions(all),
    boards: new FakeBoards([{ boardId: 'board-a', orgId: 'org-a', visibility: 'PRIVATE', name: null }]),
    memberships: new FakeMemberships([{ orgId: 'org-a', userId: 'owner-1' }]),
    clock: fixedClock(NOW),
  };
}

describe('revokeUserSessions', () => {
  it('revokes every accessible session of the user not revoked yet, recording the caller, and counts them', async () => {
    const all = sessions(5);
    const deps = setup(all);
    await deps.sessions.markRevoked(all[0]?.id ?? '', {
      revokedAt: '2026-01-02T00:00:00.000Z',
      byUserId: 'x',
      byKeyId: null,
    });
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 4 });
    expect(
      deps.sessions.created.filter((s) => s.revokedAt === NOW && s.revokedByKeyId === 'key_1'),
    ).toHaveLength(4);
    expect(deps.sessions.created[0]?.revokedAt).toBe('2026-01-02T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 0 });
  });

  it('leaves other users, other boards and other tenants alone', async () => {
    const target = sessions(2);
    const otherUser = storedSession({
      id: '10000000-0000-4000-8000-000000000001',
      orgId: 'org-a',
      userId: 'customer-2',
    });
    const otherBoard = storedSession({
      id: '10000000-0000-4000-8000-000000000002',
      orgId: 'org-a',
      boardId: 'board-z',
      userId: 'customer-1',
    });
    const otherTenant = storedSession({
      id: '10000000-0000-4000-8000-000000000003',
      orgId: 'org-z',
      userId: 'customer-1',
    });
    const deps = setup([...target, otherUser, otherBoard, otherTenant]);
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1', boardId: 'board-a' })).toEqual({
      revoked: 2,
    });
    const untouched = deps.sessions.created.filter((s) => s.revokedAt === null).map((s) => s.id);
    expect(untouched.sort()).toEqual([otherUser.id, otherBoard.id, otherTenant.id].sort());
  });

  it(`revokes many sessions with at most ${REVOKE_CONCURRENCY} revocations in flight`, async () => {
    const deps = setup(sessions(200));
    let inFlight = 0;
    let peak = 0;
    const mark = deps.sessions.markRevoked.bind(deps.sessions);
    deps.sessions.markRevoked = async (id, revocation) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
      return mark(id, revocation);
    };
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 200 });
    expect(peak).toBe(REVOKE_CONCURRENCY);
  });

  it('answers 0 when the user has no session the caller may reach', async () => {
    const deps = setup(sessions(3));
    expect(
      await revokeUserSessions(deps, { userId: 'stranger', keyId: 'k' }, { userId: 'customer-1' }),
    ).toEqual({
      revoked: 0,
    });
    expect(deps.sessions.created.every((s) => s.revokedAt === null)).toBe(true);
  });
});

describe('revokeUserSessions: tenants and failures', () => {
  it('leaves alone another tenant’s session of the same external user on the caller’s own public board', async () => {
    const stranger = storedSession({
      id: '20000000-0000-4000-8000-000000000001',
      orgId: 'org-a',
      boardId: 'board-a',
      userId: 'customer-1',
      createdByUserId: 'stranger',
    });
    const deps = setup([...sessions(2, { createdByUserId: 'owner-1' }), stranger]);
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 2 });
    expect(deps.sessions.created.find((s) => s.id === stranger.id)?.revokedAt).toBeNull();
  });

  it('narrows to the board for a creator outside the board’s organization', async () => {
    const onA = storedSession({
      id: '30000000-0000-4000-8000-000000000001',
      orgId: 'org-x',
      boardId: 'board-x1',
      userId: 'customer-1',
      createdByUserId: 'owner-1',
    });
    const onB = storedSession({
      id: '30000000-0000-4000-8000-000000000002',
      orgId: 'org-x',
      boardId: 'board-x2',
      userId: 'customer-1',
      createdByUserId: 'owner-1',
    });
    const deps = setup([onA, onB]);
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1', boardId: 'board-x1' })).toEqual({
      revoked: 1,
    });
    expect(deps.sessions.created.find((s) => s.id === onB.id)?.revokedAt).toBeNull();
  });

  it('stops taking new sessions once a revocation fails, and fails the call', async () => {
    const deps = setup(sessions(100));
    let calls = 0;
    let callsWhenFailed = 0;
    deps.sessions.markRevoked = async () => {
      calls += 1;
      const call = calls;
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (call === 3) {
        callsWhenFailed = calls;
        throw new Error('DynamoDB unavailable');
      }
      return true;
    };
    await expect(revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).rejects.toThrow(
      'DynamoDB unavailable',
    );
    // Those in flight finish; nobody starts another after the failure.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toBe(callsWhenFailed);
    expect(calls).toBeLessThan(100);
  });
});
