import { describe, expect, it } from 'vitest';
import { SessionNotFoundError } from '#lib/domain/errors';
import { getSession, revokeSession } from '#lib/use-cases/manage-session';
import { FakeMemberships, FakeSessions, fixedClock } from '#test/support/fakes';
import { keysOf, SESSION_VIEW_FIELDS, sorted, storedSession } from '#test/support/fixtures';

const NOW = '2026-01-05T00:00:00.000Z';
const ID = '3f2c1e0a-0000-4000-8000-000000000001';
const SESSION = storedSession({ id: ID, orgId: 'org-a', createdByUserId: 'creator' });

function setup(members: Array<{ orgId: string; userId: string }> = []) {
  return {
    sessions: new FakeSessions([SESSION]),
    memberships: new FakeMemberships(members),
    clock: fixedClock(NOW),
  };
}

describe('getSession', () => {
  it('returns the view of a session its creator asks for, without reading memberships', async () => {
    const deps = setup();
    const view = await getSession(deps, { userId: 'creator', keyId: 'any-key' }, ID);
    expect(keysOf(view)).toEqual(sorted(SESSION_VIEW_FIELDS));
    expect(view).toMatchObject({ id: ID, status: 'active', revokedAt: null });
    expect(deps.memberships.queries).toEqual([]);
  });

  it('returns it to a member of its organization', async () => {
    const deps = setup([{ orgId: 'org-a', userId: 'member' }]);
    await expect(getSession(deps, { userId: 'member', keyId: 'k' }, ID)).resolves.toMatchObject({ id: ID });
  });

  it('answers not found to anyone else, and for an id that names no session', async () => {
    const deps = setup([{ orgId: 'org-b', userId: 'other' }]);
    await expect(getSession(deps, { userId: 'other', keyId: 'k' }, ID)).rejects.toThrow(SessionNotFoundError);
    await expect(
      getSession(deps, { userId: 'creator', keyId: 'k' }, '00000000-0000-4000-8000-000000000000'),
    ).rejects.toThrow(SessionNotFoundError);
  });

  it('answers not found for a malformed id without reading anything', async () => {
    const deps = setup();
    await expect(getSession(deps, { userId: 'creator', keyId: 'k' }, 'x')).rejects.toThrow(
      SessionNotFoundError,
    );
    expect(deps.sessions.calls).toEqual([]);
  });

  it('never lets a session with no recorded creator or organization match an empty caller', async () => {
    const deps = { ...setup(), sessions: new FakeSessions([{ ...SESSION, orgId: '', createdByUserId: '' }]) };
    await expect(getSession(deps, { userId: '', keyId: '' }, ID)).rejects.toThrow(SessionNotFoundError);
  });
});

describe('revokeSession', () => {
  it('records the time and the caller, and answers the session as revoked', async () => {
    const deps = setup([{ orgId: 'org-a', userId: 'member' }]);
    const view = await revokeSession(deps, { userId: 'member', keyId: 'key_m' }, ID);
    expect(view).toMatchObject({ status: 'revoked', revokedAt: NOW });
    expect(deps.sessions.created[0]).toMatchObject({ revokedByUserId: 'member', revokedByKeyId: 'key_m' });
  });

  it('keeps the first revocation when revoked again', async () => {
    const deps = setup();
    await revokeSession(deps, { userId: 'creator', keyId: 'k1' }, ID);
    const later = { ...deps, clock: fixedClock('2026-02-01T00:00:00.000Z') };
    const again = await revokeSession(later, { userId: 'creator', keyId: 'k2' }, ID);
    expect(again.revokedAt).toBe(NOW);
    expect(deps.sessions.created[0]?.revokedByKeyId).toBe('k1');
  });

  it('revokes nothing for a caller who may not see the session', async () => {
    const deps = setup();
    await expect(revokeSession(deps, { userId: 'intruder', keyId: 'k' }, ID)).rejects.toThrow(
      SessionNotFoundError,
    );
    expect(deps.sessions.created[0]?.revokedAt).toBeNull();
  });
});
