import { describe, expect, it } from 'vitest';
import { type CutoffEntry, withCutoffs } from '#lib/domain/cutoffs';
import { BoardAccessDeniedError, BoardNotFoundError } from '#lib/domain/errors';
import { BOARD_REVOKE_DENIED, revokeUserSessions } from '#lib/use-cases/revoke-user-sessions';
import {
  FakeBoards,
  FakeMemberships,
  FakeSessions,
  fixedClock,
  sequenceRandom,
  tickingClock,
} from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

const NOW = '2026-01-05T00:00:00.000Z';
const CALLER = { userId: 'owner-1', keyId: 'key_1' };

function sessions(count: number, overrides: Parameters<typeof storedSession>[0] = {}) {
  return Array.from({ length: count }, (_, i) =>
    storedSession({
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      tokenHash: String(i + 1).padStart(64, '0'),
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      orgId: 'org-a',
      boardId: 'board-a',
      userId: 'customer-1',
      ...overrides,
    }),
  );
}

/** One more session of customer-1 on board-a, outside what `sessions` made (no scope read shows it). */
function customerSession(id: string, fields: Parameters<typeof storedSession>[0]) {
  return storedSession({ id, orgId: 'org-a', boardId: 'board-a', userId: 'customer-1', ...fields });
}

function setup(all: ReturnType<typeof sessions>, now = NOW) {
  const store = new FakeSessions(all);
  return {
    sessions: store,
    // The fake keeps the cut-off records beside the sessions, as the table does.
    cutoffs: store,
    boards: new FakeBoards([
      { boardId: 'board-a', orgId: 'org-a', visibility: 'PUBLIC', name: null },
      { boardId: 'board-z', orgId: 'org-z', visibility: 'PUBLIC', name: null },
    ]),
    memberships: new FakeMemberships([
      { orgId: 'org-a', userId: 'owner-1' },
      { orgId: 'org-a', userId: 'colleague' },
      { orgId: 'org-z', userId: 'owner-z' },
    ]),
    clock: fixedClock(now),
    random: sequenceRandom(),
  };
}

/** The sessions as retrieve and the embed page see them: with the cut-offs applied. */
async function seen(deps: ReturnType<typeof setup>) {
  return deps.sessions.applyCutoffs(deps.sessions.created);
}

describe('revokeUserSessions: one cut-off per scope', () => {
  it('revokes every session of the user at the cut-off and counts the active ones', async () => {
    const all = sessions(5);
    const deps = setup(all);
    await deps.sessions.markRevoked(all[0]?.id ?? '', {
      revokedAt: '2026-01-02T00:00:00.000Z',
      byUserId: 'x',
      byKeyId: null,
    });
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 4 });
    const after = await seen(deps);
    expect(after.map((s) => s.revokedAt)).toEqual(['2026-01-02T00:00:00.000Z', NOW, NOW, NOW, NOW]);
    expect(after[1]).toMatchObject({ revokedByUserId: 'owner-1', revokedByKeyId: 'key_1' });
  });

  it('writes each record twice with one entry, whatever the number of sessions: before the count and after it', async () => {
    for (const count of [1, 300]) {
      const deps = setup(sessions(count));
      const writes: Array<{ entry: string; counted: boolean; scopes: string[] }> = [];
      const write = deps.sessions.writeCutoff.bind(deps.sessions);
      deps.sessions.writeCutoff = async (scopes, cutoff) => {
        writes.push({
          entry: cutoff.entry.id,
          counted: cutoff.entry.until !== undefined,
          scopes: scopes.map((scope) => scope.kind),
        });
        return write(scopes, cutoff);
      };
      await revokeUserSessions(deps, CALLER, { userId: 'customer-1' });
      // One entry: uncounted on both scopes' records, then counted on both: four item writes.
      expect(new Set(writes.map((w) => w.entry)).size).toBe(1);
      const kinds = (counted: boolean) =>
        writes
          .filter((w) => w.counted === counted)
          .flatMap((w) => w.scopes)
          .sort();
      expect(kinds(false)).toEqual(['creatorUser', 'tenantUser']);
      expect(kinds(true)).toEqual(['creatorUser', 'tenantUser']);
      expect(deps.sessions.calls).not.toContain('revoke');
    }
  });

  it('tells each call once: only its last write, on one record, carries the scope and the count it answered', async () => {
    const deps = setup(sessions(3));
    const written: Array<{ scope: string; entry: CutoffEntry }> = [];
    const write = deps.sessions.writeCutoff.bind(deps.sessions);
    deps.sessions.writeCutoff = async (scopes, cutoff) => {
      for (const scope of scopes) written.push({ scope: scope.kind, entry: cutoff.entry });
      return write(scopes, cutoff);
    };
    // Every reading a second later: the first write and the last one have different instants.
    deps.clock = tickingClock(NOW, 1_000);
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 3 });
    const told = written.filter((w) => w.entry.notice !== undefined);
    expect(told).toHaveLength(1);
    const last = told[0]?.entry;
    expect(told[0]).toMatchObject({
      scope: 'creatorUser',
      entry: {
        byUserId: 'owner-1',
        byKeyId: 'key_1',
        notice: { scope: { userId: 'customer-1' }, revoked: 3, writtenAt: last?.at },
      },
    });
    // The last write: after the first one, which tells nothing, as its other record does not.
    const first = written[0]?.entry;
    expect(first?.notice).toBeUndefined();
    expect(String(last?.at) > String(first?.at)).toBe(true);
    expect(written.filter((w) => w.entry.at === last?.at).map((w) => w.scope)).toEqual([
      'tenantUser',
      'creatorUser',
    ]);
  });

  it('names the scope as the caller did: a board alone, or a user on a board', async () => {
    for (const command of [{ boardId: 'board-a' }, { userId: 'customer-1', boardId: 'board-a' }]) {
      const deps = setup(sessions(2));
      const notices: unknown[] = [];
      const write = deps.sessions.writeCutoff.bind(deps.sessions);
      deps.sessions.writeCutoff = async (scopes, cutoff) => {
        if (cutoff.entry.notice) notices.push(cutoff.entry.notice);
        return write(scopes, cutoff);
      };
      const { revoked } = await revokeUserSessions(deps, CALLER, command);
      expect(notices).toEqual([{ scope: command, revoked, writtenAt: NOW }]);
    }
  });

  it('has covered every session created before the call began when the count then fails', async () => {
    const deps = setup(sessions(3));
    deps.sessions.scopeCandidates = async () => {
      throw new Error('DynamoDB is unavailable');
    };
    await expect(revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).rejects.toThrow('unavailable');
    expect((await seen(deps)).map((s) => s.revokedAt)).toEqual([NOW, NOW, NOW]);
  });

  it('counts nothing and moves no cut-off back when revoking twice: the first cut-off stays', async () => {
    const deps = setup(sessions(3));
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 3 });
    deps.clock = fixedClock('2026-01-06T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 0 });
    expect((await seen(deps)).map((s) => s.revokedAt)).toEqual([NOW, NOW, NOW]);
  });

  it('leaves a session created after the cut-off active, until a later cut-off covers it', async () => {
    const deps = setup(sessions(1));
    await revokeUserSessions(deps, CALLER, { userId: 'customer-1' });
    const later = customerSession('20000000-0000-4000-8000-000000000001', {
      createdAt: '2026-01-05T00:00:00.001Z',
    });
    await deps.sessions.create(later);
    const [covered] = await deps.sessions.applyCutoffs([later]);
    expect(covered?.revokedAt).toBeNull();
    deps.clock = fixedClock('2026-01-06T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 1 });
    expect((await seen(deps)).map((s) => s.revokedAt)).toEqual([NOW, '2026-01-06T00:00:00.000Z']);
  });

  it('covers a session created at the very instant of the cut-off (at or before)', async () => {
    const deps = setup(sessions(1, { createdAt: NOW }));
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 1 });
    expect((await seen(deps))[0]?.revokedAt).toBe(NOW);
  });

  it('covers a colleague’s session the index has not shown yet, but never another tenant’s', async () => {
    const deps = setup([]);
    await revokeUserSessions(deps, CALLER, { userId: 'customer-1' });
    // Created before the cut-off but absent from every scope read (the index lagged): still covered.
    const colleagues = customerSession('30000000-0000-4000-8000-000000000001', {
      createdByUserId: 'colleague',
      createdAt: '2026-01-04T23:59:59.999Z',
    });
    // Another tenant's own "customer-1", on org-a's public board.
    const outsiders = {
      ...colleagues,
      id: '30000000-0000-4000-8000-000000000002',
      createdByUserId: 'owner-z',
      tenant: { kind: 'keyOwner' as const, id: 'owner-z' },
    };
    const [a, b] = await deps.sessions.applyCutoffs([colleagues, outsiders]);
    expect(a?.revokedAt).toBe(NOW);
    expect(b?.revokedAt).toBeNull();
  });

  it('never touches another tenant’s sessions of the same external user id', async () => {
    const mine = sessions(2);
    const theirs = sessions(2, { createdByUserId: 'owner-z', orgId: 'org-z', boardId: 'board-z' }).map(
      (s, i) => ({
        ...s,
        id: `40000000-0000-4000-8000-00000000000${i}`,
        tokenHash: `${i}`.padStart(64, 'f'),
      }),
    );
    const deps = setup([...mine, ...theirs]);
    expect(
      await revokeUserSessions(deps, { userId: 'owner-z', keyId: 'kz' }, { userId: 'customer-1' }),
    ).toEqual({ revoked: 2 });
    const after = await seen(deps);
    expect(after.filter((s) => s.createdByUserId === 'owner-1').map((s) => s.revokedAt)).toEqual([
      null,
      null,
    ]);
    expect(after.filter((s) => s.createdByUserId === 'owner-z').map((s) => s.revokedAt)).toEqual([NOW, NOW]);
  });

  it('narrows to one board with boardId, for the organization’s members’ sessions there', async () => {
    const onA = sessions(2);
    const elsewhere = sessions(1, { boardId: 'board-b' }).map((s) => ({
      ...s,
      id: '50000000-0000-4000-8000-000000000001',
      tokenHash: 'e'.repeat(64),
    }));
    const deps = setup([...onA, ...elsewhere]);
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1', boardId: 'board-a' })).toEqual({
      revoked: 2,
    });
    const after = await seen(deps);
    expect(after.map((s) => [s.boardId, s.revokedAt])).toEqual([
      ['board-a', NOW],
      ['board-a', NOW],
      ['board-b', null],
    ]);
  });

  it('reads every scope at once from the index alone, the caller’s own scope leaving out its organization’s', async () => {
    const deps = setup(sessions(3));
    const asked: [string, readonly string[] | undefined][] = [];
    const read = deps.sessions.scopeCandidates.bind(deps.sessions);
    let inFlight = 0;
    let most = 0;
    deps.sessions.scopeCandidates = async (scope, at, options) => {
      asked.push([scope.kind, options?.exceptOrgs]);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
      return read(scope, at, options);
    };
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 3 });
    expect(asked).toEqual([
      ['orgUser', undefined],
      ['creatorUser', ['org-a']],
    ]);
    expect(most).toBe(2);
    expect(deps.sessions.calls.filter((call) => call === 'get' || call === 'getMany')).toEqual([]);
  });

  it('counts a session found through two scopes once', async () => {
    const deps = setup(sessions(2));
    // As an index that could not apply the organization filter: the caller's scope returns them too.
    const read = deps.sessions.scopeCandidates.bind(deps.sessions);
    deps.sessions.scopeCandidates = (scope, at) => read(scope, at);
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 2 });
  });

  it('does not count expired sessions', async () => {
    const deps = setup(sessions(2, { expiresAt: '2026-01-03T00:00:00.000Z' }));
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 0 });
  });
});

describe('revokeUserSessions: a board’s whole population', () => {
  it('revokes every tenant’s sessions on the board for a member of its organization', async () => {
    const mine = sessions(1);
    const theirs = sessions(1, { createdByUserId: 'owner-z', userId: 'other' }).map((s) => ({
      ...s,
      id: '60000000-0000-4000-8000-000000000001',
      tokenHash: 'c'.repeat(64),
    }));
    const deps = setup([...mine, ...theirs]);
    expect(await revokeUserSessions(deps, CALLER, { boardId: 'board-a' })).toEqual({ revoked: 2 });
    expect((await seen(deps)).map((s) => s.revokedAt)).toEqual([NOW, NOW]);
  });

  it('refuses a caller outside the board’s organization, and writes nothing', async () => {
    const deps = setup(sessions(1));
    await expect(
      revokeUserSessions(deps, { userId: 'owner-z', keyId: 'kz' }, { boardId: 'board-a' }),
    ).rejects.toThrow(new BoardAccessDeniedError(BOARD_REVOKE_DENIED));
    expect(deps.sessions.calls).not.toContain('writeCutoff');
  });

  it('answers that an unknown board does not exist', async () => {
    const deps = setup([]);
    await expect(revokeUserSessions(deps, CALLER, { boardId: 'nope' })).rejects.toBeInstanceOf(
      BoardNotFoundError,
    );
  });
});

describe('withCutoffs', () => {
  it('keeps a session’s own revocation when it came before the cut-off', () => {
    const session = storedSession({ revokedAt: '2026-01-01T00:00:01.000Z', revokedByUserId: 'me' });
    const record = {
      scope: { kind: 'stage' as const },
      entries: [{ id: 'e', at: '2026-01-02T00:00:00.000Z', byUserId: 'admin-cli', byKeyId: null }],
    };
    expect(withCutoffs(session, [record])).toBe(session);
    const later = { ...session, revokedAt: '2026-01-03T00:00:00.000Z' };
    expect(withCutoffs(later, [record])).toMatchObject({
      revokedAt: '2026-01-02T00:00:00.000Z',
      revokedByUserId: 'admin-cli',
    });
  });

  it('ignores a record whose scope does not hold the session', () => {
    const session = storedSession({ boardId: 'board-1' });
    const record = {
      scope: { kind: 'board' as const, boardId: 'board-2' },
      entries: [{ id: 'e', at: '2026-01-02T00:00:00.000Z', byUserId: 'u', byKeyId: null }],
    };
    expect(withCutoffs(session, [record]).revokedAt).toBeNull();
  });
});

describe('revokeUserSessions: a scope its own earlier cut-off covers', () => {
  /** `count` sessions of customer-1 on board-a, one a second from `start`, created by `creator`. */
  function made(count: number, start: number, creator: string, prefix: string) {
    return Array.from({ length: count }, (_, i) =>
      storedSession({
        id: `${prefix}-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
        tokenHash: `${prefix}${String(i + 1)}`.padStart(64, '0'),
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, start + i)).toISOString(),
        orgId: 'org-a',
        boardId: 'board-a',
        userId: 'customer-1',
        createdByUserId: creator,
      }),
    );
  }

  it.each([
    ['{userId}', { userId: 'customer-1' }],
    ['{userId, boardId}', { userId: 'customer-1', boardId: 'board-a' }],
    ['{boardId}', { boardId: 'board-a' }],
  ] as const)('reads no index entry again for the sessions it covered (%s)', async (_name, command) => {
    const deps = setup([...made(2_000, 0, 'colleague', '11111111'), ...made(500, 0, 'owner-1', '22222222')]);
    deps.clock = fixedClock('2026-01-03T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, command)).toEqual({ revoked: 2_500 });
    deps.sessions.candidatesRead = 0;

    deps.clock = fixedClock('2026-01-04T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, command)).toEqual({ revoked: 0 });
    expect(deps.sessions.candidatesRead).toBe(0);
  });

  it('reads and counts only the sessions created since its last cut-off', async () => {
    const deps = setup(made(1_000, 0, 'colleague', '11111111'));
    deps.clock = fixedClock('2026-01-03T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 1_000 });
    const later = storedSession({
      id: '33333333-0000-4000-8000-000000000001',
      tokenHash: '3'.repeat(64),
      createdAt: '2026-01-03T12:00:00.000Z',
      orgId: 'org-a',
      boardId: 'board-a',
      userId: 'customer-1',
      createdByUserId: 'colleague',
    });
    await deps.sessions.create(later);
    deps.sessions.candidatesRead = 0;
    deps.clock = fixedClock('2026-01-04T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 1 });
    expect(deps.sessions.candidatesRead).toBe(1);
  });

  it('leaves a newcomer’s sessions from before it joined to its own tenant: neither covered nor counted', async () => {
    const deps = setup(made(10, 0, 'colleague', '11111111'));
    deps.clock = fixedClock('2026-01-03T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 10 });
    // Created for its own "customer-1" on org-a's public board before it joined org-a: its tenant's user.
    const before = made(3, 100, 'newcomer', '44444444').map((s) => ({
      ...s,
      tenant: { kind: 'keyOwner' as const, id: 'newcomer' },
    }));
    for (const s of before) await deps.sessions.create(s);
    await deps.memberships.add('org-a', 'newcomer', '2026-01-03T06:00:00.000Z');
    // Created as a member: org-a's user.
    const after = storedSession({
      id: '44444444-0000-4000-8000-000000000100',
      tokenHash: '4'.repeat(64),
      createdAt: '2026-01-03T12:00:00.000Z',
      orgId: 'org-a',
      boardId: 'board-a',
      userId: 'customer-1',
      createdByUserId: 'newcomer',
    });
    await deps.sessions.create(after);
    deps.clock = fixedClock('2026-01-04T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1' })).toEqual({ revoked: 1 });
    const seenNow = await deps.sessions.applyCutoffs([...before, after]);
    expect(seenNow.map((s) => s.revokedAt)).toEqual([null, null, null, '2026-01-04T00:00:00.000Z']);
  });

  it('counts exactly what an earlier cut-off of narrower creators left out', async () => {
    // A non-member revoked its own sessions of the user on board-a; a member's later call covers the rest.
    const outsiders = made(2, 10, 'outsider', '55555555').map((s) => ({
      ...s,
      tenant: { kind: 'keyOwner' as const, id: 'outsider' },
    }));
    const deps = setup([...made(4, 0, 'colleague', '11111111'), ...outsiders]);
    deps.clock = fixedClock('2026-01-03T00:00:00.000Z');
    expect(
      await revokeUserSessions(
        deps,
        { userId: 'outsider', keyId: 'key_o' },
        { userId: 'customer-1', boardId: 'board-a' },
      ),
    ).toEqual({ revoked: 2 });
    deps.clock = fixedClock('2026-01-04T00:00:00.000Z');
    expect(await revokeUserSessions(deps, CALLER, { userId: 'customer-1', boardId: 'board-a' })).toEqual({
      revoked: 4,
    });
  });
});
