import { describe, expect, it } from 'vitest';
import { TenantGuess } from '#lib/use-cases/session-streams';
import { FakeMemberships } from '#test/support/fakes';

/**
 * Whose a session known only from an index entry is (the indexes hold no tenant): its board's
 * organization when its creator's current membership began at or before it, else its creator.
 */
describe('TenantGuess', () => {
  const memberships = () =>
    new FakeMemberships([
      { orgId: 'org-a', userId: 'early', addedAt: '2026-01-01T00:00:00.000Z' },
      { orgId: 'org-a', userId: 'late', addedAt: '2026-01-10T00:00:00.000Z' },
      // Recorded without the time it began: a member since always, as far as anyone can tell.
      { orgId: 'org-a', userId: 'undated' },
    ]);
  const session = (createdByUserId: string, createdAt = '2026-01-05T00:00:00.000Z') => ({
    orgId: 'org-a',
    createdByUserId,
    createdAt,
  });

  it('takes the organization’s for a member since before the session, the creator’s otherwise', async () => {
    const guess = new TenantGuess(memberships());
    expect(await guess.of(session('early'))).toEqual({ kind: 'organization', id: 'org-a' });
    expect(await guess.of(session('undated'))).toEqual({ kind: 'organization', id: 'org-a' });
    // Joined after creating it: the session was its own tenant's.
    expect(await guess.of(session('late'))).toEqual({ kind: 'keyOwner', id: 'late' });
    expect(await guess.of(session('late', '2026-01-10T00:00:00.000Z'))).toEqual({
      kind: 'organization',
      id: 'org-a',
    });
    // Not a member now: its own.
    expect(await guess.of(session('guest'))).toEqual({ kind: 'keyOwner', id: 'guest' });
  });

  it('reads each creator’s membership once, however many sessions ask', async () => {
    const fake = memberships();
    const guess = new TenantGuess(fake);
    const sessions = Array.from({ length: 1_000 }, (_, i) => session(i % 2 === 0 ? 'early' : 'guest'));
    const tenants = await guess.ofAll(sessions);
    expect(tenants.filter((tenant) => tenant.kind === 'organization')).toHaveLength(500);
    expect(fake.queries).toHaveLength(2);
  });

  it('takes a session stored before ownership was recorded as its organization’s, reading nothing', async () => {
    const fake = memberships();
    expect(
      await new TenantGuess(fake).of({
        orgId: 'org-a',
        createdByUserId: '',
        createdAt: '2026-01-05T00:00:00.000Z',
      }),
    ).toEqual({
      kind: 'organization',
      id: 'org-a',
    });
    expect(fake.queries).toHaveLength(0);
  });
});
