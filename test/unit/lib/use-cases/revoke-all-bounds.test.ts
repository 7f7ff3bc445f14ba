import { describe, expect, it } from 'vitest';
import { CUTOFF_ENTRIES_MAX, cutoffScopesOf } from '#lib/domain/cutoffs';
import { DependencyUnavailableError, StorageUnavailableError } from '#lib/domain/errors';
import { compactLegacyCutoffs } from '#lib/use-cases/admin';
import { revokeUserSessions } from '#lib/use-cases/revoke-user-sessions';
import {
  FakeBoards,
  FakeMemberships,
  FakeSessions,
  fixedClock,
  sequenceRandom,
  tickingClock,
} from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

/**
 * Revoke-all's cut-off records stay small and per tenant (issue 33, item 1): a record holds a bounded
 * number of entries whatever the number of calls, never a copy of a member list, and no record holds
 * two tenants' cut-offs. A call revokes everything it was asked to or nothing, and says which.
 */
const START = '2026-01-05T00:00:00.000Z';
const OWNER = { userId: 'owner-1', keyId: 'key_1' };
const OUTSIDER = { userId: 'outsider', keyId: 'key_o' };

function setup(sessions: ReturnType<typeof storedSession>[], members: string[] = ['owner-1', 'colleague']) {
  const store = new FakeSessions(sessions);
  return {
    sessions: store,
    cutoffs: store,
    boards: new FakeBoards([{ boardId: 'board-a', orgId: 'org-a', visibility: 'PUBLIC', name: null }]),
    memberships: new FakeMemberships(members.map((userId) => ({ orgId: 'org-a', userId }))),
    // Every reading a millisecond later, as calls one after another.
    clock: tickingClock(START, 1),
    random: sequenceRandom(),
  };
}

const session = (id: number, fields: Parameters<typeof storedSession>[0]) =>
  storedSession({
    id: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
    tokenHash: String(id).padStart(64, '0'),
    orgId: 'org-a',
    boardId: 'board-a',
    userId: 'customer-1',
    createdAt: '2026-01-04T00:00:00.000Z',
    expiresAt: '2026-02-01T00:00:00.000Z',
    ...fields,
  });

/** The serialized size of a record's entries: what a read of it carries. */
const bytesOf = (entries: unknown[]) => Buffer.byteLength(JSON.stringify(entries));

describe('revoke-all keeps every cut-off record bounded', () => {
  it('holds at most CUTOFF_ENTRIES_MAX entries per record after 10,000 calls on one scope', async () => {
    const mine = session(1, {
      createdByUserId: 'outsider',
      tenant: { kind: 'keyOwner', id: 'outsider' },
    });
    const deps = setup([mine]);
    for (let call = 0; call < 10_000; call++) {
      await revokeUserSessions(deps, OUTSIDER, { userId: 'customer-1', boardId: 'board-a' });
    }
    const records = deps.sessions.storedCutoffs();
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      expect(record.entries.length).toBeLessThanOrEqual(CUTOFF_ENTRIES_MAX);
      expect(bytesOf(record.entries)).toBeLessThan(4 * 1024);
    }
    // The covered session stays covered, and the board owner's own call on the pair still works.
    const [covered] = await deps.sessions.applyCutoffs([mine]);
    expect(covered?.revokedAt).not.toBeNull();
    const theirs = session(2, { createdAt: '2026-01-05T01:00:00.000Z' });
    await deps.sessions.create(theirs);
    deps.clock = tickingClock('2026-01-05T02:00:00.000Z', 1);
    expect(await revokeUserSessions(deps, OWNER, { userId: 'customer-1', boardId: 'board-a' })).toEqual({
      revoked: 1,
    });
  });

  it('copies no member list: a member of an organization of 20,000 covers a colleague’s session', async () => {
    const members = ['owner-1', ...Array.from({ length: 19_999 }, (_, i) => `member-${i}`)];
    const colleagues = session(1, { createdByUserId: 'member-17' });
    const deps = setup([colleagues], members);
    expect(await revokeUserSessions(deps, OWNER, { userId: 'customer-1' })).toEqual({ revoked: 1 });
    const [covered] = await deps.sessions.applyCutoffs([colleagues]);
    expect(covered?.revokedAt).not.toBeNull();
    for (const record of deps.sessions.storedCutoffs()) {
      for (const entry of record.entries) expect(entry).not.toHaveProperty('creators');
      expect(bytesOf(record.entries)).toBeLessThan(4 * 1024);
    }
  });
});

describe('revoke-all keeps tenants apart', () => {
  it('writes two tenants’ cut-offs of one (board, user) pair into records of their own', async () => {
    const deps = setup([
      session(1, { createdByUserId: 'outsider', tenant: { kind: 'keyOwner', id: 'outsider' } }),
      session(2, { createdByUserId: 'owner-1' }),
    ]);
    await revokeUserSessions(deps, OUTSIDER, { userId: 'customer-1', boardId: 'board-a' });
    await revokeUserSessions(deps, OWNER, { userId: 'customer-1', boardId: 'board-a' });
    for (const record of deps.sessions.storedCutoffs()) {
      const writers = new Set(record.entries.map((entry) => entry.byUserId));
      expect(writers.size, record.key).toBe(1);
    }
  });
});

describe('the issue’s reproduction: a non-owner organization floods a public board’s pair', () => {
  it('leaves the owner’s revoke-all of the pair answering, its records its own, after 1,124 calls by another organization’s key', async () => {
    const theirs = session(1, { createdByUserId: 'outsider', tenant: { kind: 'keyOwner', id: 'outsider' } });
    const ours = session(2, { createdByUserId: 'owner-1' });
    const deps = setup([theirs, ours]);
    // The outsider is a member of an organization of its own, not of the board's.
    deps.memberships = new FakeMemberships([
      { orgId: 'org-a', userId: 'owner-1' },
      { orgId: 'org-z', userId: 'outsider' },
    ]);
    for (let call = 0; call < 1_124; call++) {
      await revokeUserSessions(deps, OUTSIDER, { userId: 'customer-1', boardId: 'board-a' });
    }
    // The owner's session is untouched by them, and its own call revokes it.
    expect((await deps.sessions.applyCutoffs([ours]))[0]?.revokedAt).toBeNull();
    expect(await revokeUserSessions(deps, OWNER, { userId: 'customer-1', boardId: 'board-a' })).toEqual({
      revoked: 1,
    });
    for (const record of deps.sessions.storedCutoffs()) {
      const writers = new Set(record.entries.map((entry) => entry.byUserId));
      expect(writers.size, record.key).toBe(1);
      expect(record.entries.length).toBeLessThanOrEqual(CUTOFF_ENTRIES_MAX);
    }
  });

  it('keeps what an embed load of a covered session reads of cut-offs to a few KB', async () => {
    const mine = session(1, { createdByUserId: 'owner-1' });
    const deps = setup([mine]);
    // Every kind of call that covers the session, 10,000 in all.
    for (let call = 0; call < 2_500; call++) {
      await revokeUserSessions(deps, OWNER, { userId: 'customer-1', boardId: 'board-a' });
      await revokeUserSessions(deps, OWNER, { userId: 'customer-1' });
      await revokeUserSessions(deps, OWNER, { boardId: 'board-a' });
      await revokeUserSessions(deps, { userId: 'colleague', keyId: 'key_c' }, { userId: 'customer-1' });
    }
    // What the embed page's one BatchGetItem of the session's possible records carries.
    const read = await deps.sessions.readCutoffs(cutoffScopesOf(mine));
    const bytes = bytesOf(read.map((record) => record.entries));
    expect(read.length).toBeGreaterThan(2);
    expect(bytes).toBeLessThan(8 * 1024);
  });
});

describe('revoke-all revokes everything it was asked to or nothing, and says which', () => {
  it('undoes what it wrote and says nothing was revoked when one of its records cannot be written', async () => {
    const own = session(1, { createdByUserId: 'owner-1' });
    const colleagues = session(2, { createdByUserId: 'colleague' });
    const deps = setup([own, colleagues]);
    // The organization's record refuses every write (DynamoDB throttling it, say).
    deps.sessions.failCutoffWrites = (scopeKey) => scopeKey.includes('org-a');
    const call = revokeUserSessions(deps, OWNER, { userId: 'customer-1' });
    await expect(call).rejects.toBeInstanceOf(DependencyUnavailableError);
    await expect(call).rejects.toThrow(/Nothing was revoked/);
    const after = await deps.sessions.applyCutoffs([own, colleagues]);
    expect(after.map((s) => s.revokedAt)).toEqual([null, null]);
  });

  it('says the sessions created before the call were revoked when its count fails after its first cut-off', async () => {
    const own = session(1, { createdByUserId: 'owner-1' });
    const deps = setup([own]);
    deps.sessions.scopeCandidates = async () => {
      throw new StorageUnavailableError();
    };
    const call = revokeUserSessions(deps, OWNER, { userId: 'customer-1' });
    await expect(call).rejects.toBeInstanceOf(DependencyUnavailableError);
    await expect(call).rejects.toThrow(/were revoked/);
    const [after] = await deps.sessions.applyCutoffs([own]);
    expect(after?.revokedAt).toBe(START);
  });
});

describe('records written before they were bounded and per tenant', () => {
  const legacyEntry = (n: number, at: string, creators: string[]) => ({
    id: `old-${n}`,
    at,
    byUserId: creators[0] ?? 'x',
    byKeyId: null,
    creators,
  });

  it('are read as written (creators honoured), and compacted once: bounded, expiring with what they cover', async () => {
    const outsiders = session(1, {
      createdByUserId: 'outsider',
      tenant: { kind: 'keyOwner', id: 'outsider' },
      expiresAt: '2026-03-01T00:00:00.000Z',
    });
    const colleagues = session(2, { createdByUserId: 'colleague', expiresAt: '2026-04-01T00:00:00.000Z' });
    const deps = setup([outsiders, colleagues]);
    const pair = { kind: 'boardUser' as const, boardId: 'board-a', userId: 'customer-1' };
    // As the 1,124 calls of an outsider left it: its cut-offs of the pair, each naming it.
    deps.sessions.storeLegacyCutoff(
      pair,
      Array.from({ length: 1_124 }, (_, n) =>
        legacyEntry(n, new Date(Date.UTC(2026, 0, 4, 1, 0, n)).toISOString(), ['outsider']),
      ),
    );
    const members = Array.from({ length: 2_001 }, (_, n) => `member-${n}`);
    const org = { kind: 'orgUser' as const, orgId: 'org-a', userId: 'customer-1' };
    deps.sessions.storeLegacyCutoff(org, [
      legacyEntry(10_000, '2026-01-04T02:00:00.000Z', ['colleague', ...members]),
      legacyEntry(10_001, '2026-01-04T03:00:00.000Z', ['colleague', ...members]),
    ]);
    const seen = async () =>
      (await deps.sessions.applyCutoffs([outsiders, colleagues])).map((s) => s.revokedAt);
    // Read as written: each entry covers its own creators' sessions only.
    expect(await seen()).toEqual(['2026-01-04T01:00:00.000Z', '2026-01-04T02:00:00.000Z']);

    const result = await compactLegacyCutoffs({
      sessions: deps.sessions,
      cutoffs: deps.sessions,
      clock: fixedClock(START),
      random: sequenceRandom(),
    });
    expect(result).toEqual({
      records: 2,
      compacted: 2,
      skipped: 0,
      entriesBefore: 1_126,
      entriesAfter: 2,
      // The fake keeps one record per scope: nothing to copy (the adapter's copies are tested over DynamoDB).
      copies: { records: 2, copiesWritten: 0, unfinished: 0 },
    });
    const stored = deps.sessions.storedCutoffs();
    expect(stored.map((record) => [record.entries.length, record.expiry])).toEqual([
      [1, Date.parse('2026-03-01T00:00:00.000Z') / 1000],
      [1, Date.parse('2026-04-01T00:00:00.000Z') / 1000],
    ]);
    // Still revoked, at the latest cut-off of the same creators now.
    expect(await seen()).toEqual(['2026-01-04T01:18:43.000Z', '2026-01-04T03:00:00.000Z']);
    // Run again: nothing left to compact.
    expect(
      (
        await compactLegacyCutoffs({
          sessions: deps.sessions,
          cutoffs: deps.sessions,
          clock: fixedClock(START),
          random: sequenceRandom(),
        })
      ).records,
    ).toBe(0);
  });
});
