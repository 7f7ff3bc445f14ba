import { describe, expect, it } from 'vitest';
import {
  CachedBoardRepository,
  CachedMembershipRepository,
  READ_CACHE_LIMITS,
  ReadCache,
} from '#lib/adapters/cache/read-cache';
import type { Board } from '#lib/domain/board';
import type { Clock } from '#lib/domain/ports';
import { FakeBoards, FakeMemberships } from '#test/support/fakes';

/** A clock that stands still until the test moves it. */
function movableClock(iso = '2026-01-01T00:00:00.000Z'): Clock & { advance(ms: number): void } {
  let nowMs = Date.parse(iso);
  return {
    now: () => new Date(nowMs),
    advance: (ms) => {
      nowMs += ms;
    },
  };
}

const board = (boardId: string, orgId: string, name = 'Roadmap'): Board => ({
  boardId,
  orgId,
  visibility: 'PUBLIC',
  name,
});

describe('the board cache', () => {
  it('serves a board it read for under a second, then reads it again', async () => {
    const clock = movableClock();
    const inner = new FakeBoards([board('b1', 'org-a')]);
    const boards = new CachedBoardRepository(inner, clock);
    await boards.get('b1');
    clock.advance(999);
    await boards.get('b1');
    expect(inner.lookups).toEqual(['b1']);
    clock.advance(1);
    await boards.get('b1');
    expect(inner.lookups).toEqual(['b1', 'b1']);
  });

  it('lets a board change made elsewhere take effect within one second', async () => {
    const clock = movableClock();
    const inner = new FakeBoards([board('b1', 'org-a', 'Before')]);
    const boards = new CachedBoardRepository(inner, clock);
    expect((await boards.get('b1'))?.name).toBe('Before');
    // Another environment (an operator's change) writes the table directly.
    await inner.put(board('b1', 'org-a', 'After'));
    clock.advance(500);
    expect((await boards.get('b1'))?.name).toBe('Before');
    clock.advance(500);
    expect((await boards.get('b1'))?.name).toBe('After');
  });

  it('lets a deleted board disappear within one second', async () => {
    const clock = movableClock();
    const inner = new FakeBoards([board('b1', 'org-a')]);
    const boards = new CachedBoardRepository(inner, clock);
    await boards.get('b1');
    await inner.delete('b1', 'org-a');
    clock.advance(1_000);
    expect(await boards.get('b1')).toBeUndefined();
  });

  it('keeps no board that does not exist, so a board created a moment later is seen at once', async () => {
    const clock = movableClock();
    const inner = new FakeBoards();
    const boards = new CachedBoardRepository(inner, clock);
    expect(await boards.get('b1')).toBeUndefined();
    await inner.put(board('b1', 'org-a'));
    expect(await boards.get('b1')).toEqual(board('b1', 'org-a'));
  });

  it('costs one read per second for a hot board, however many loads the environment serves', async () => {
    const clock = movableClock();
    const inner = new FakeBoards([board('hot', 'org-a')]);
    const boards = new CachedBoardRepository(inner, clock);
    // Ten seconds of one environment serving a load every 4 ms: 2,500 loads.
    for (let load = 0; load < 2_500; load += 1) {
      await boards.get('hot');
      clock.advance(4);
    }
    expect(inner.lookups).toHaveLength(10);
  });

  it('ages an entry from when its read started, so a slow read is not kept longer', async () => {
    const clock = movableClock();
    const inner = new FakeBoards([board('b1', 'org-a')]);
    const slow: FakeBoards = Object.assign(Object.create(inner), {
      get: async (boardId: string) => {
        clock.advance(300);
        return inner.get(boardId);
      },
    });
    const boards = new CachedBoardRepository(slow, clock);
    await boards.get('b1');
    clock.advance(700);
    await boards.get('b1');
    expect(inner.lookups).toEqual(['b1', 'b1']);
  });

  it('drops the entry of a board written or deleted through it', async () => {
    const clock = movableClock();
    const inner = new FakeBoards([board('b1', 'org-a', 'Before')]);
    const boards = new CachedBoardRepository(inner, clock);
    await boards.get('b1');
    await boards.put(board('b1', 'org-a', 'After'));
    expect((await boards.get('b1'))?.name).toBe('After');
    await boards.delete('b1', 'org-a');
    expect(await boards.get('b1')).toBeUndefined();
  });

  it('reads the lists through, every time', async () => {
    const inner = new FakeBoards([board('b1', 'org-a')]);
    const boards = new CachedBoardRepository(inner, movableClock());
    await inner.put(board('b2', 'org-a'));
    expect((await boards.listOfOrg('org-a')).map((b) => b.boardId)).toEqual(['b1', 'b2']);
    expect(await boards.list()).toHaveLength(2);
  });
});

describe('the membership cache', () => {
  it('lets a removed membership stop counting within one second', async () => {
    const clock = movableClock();
    const inner = new FakeMemberships([{ orgId: 'org-a', userId: 'owner' }]);
    const memberships = new CachedMembershipRepository(inner, clock);
    expect(await memberships.isMember('org-a', 'owner')).toBe(true);
    await inner.remove('org-a', 'owner');
    clock.advance(999);
    expect(await memberships.isMember('org-a', 'owner')).toBe(true);
    clock.advance(1);
    expect(await memberships.isMember('org-a', 'owner')).toBe(false);
  });

  it('keeps a no as well, so a public board’s non-member creator costs one read a second', async () => {
    const clock = movableClock();
    const inner = new FakeMemberships();
    const memberships = new CachedMembershipRepository(inner, clock);
    for (let create = 0; create < 100; create += 1) {
      expect(await memberships.isMember('org-a', 'stranger')).toBe(false);
      clock.advance(10);
    }
    expect(inner.queries).toHaveLength(1);
    await inner.add('org-a', 'stranger', '2026-01-01T00:00:00Z');
    expect(await memberships.isMember('org-a', 'stranger')).toBe(true);
  });

  it('keeps each organization’s answer apart, whatever characters the ids hold', async () => {
    const clock = movableClock();
    const inner = new FakeMemberships([{ orgId: 'org-a', userId: 'u' }]);
    const memberships = new CachedMembershipRepository(inner, clock);
    expect(await memberships.isMember('org-a', 'u')).toBe(true);
    expect(await memberships.isMember('org-b', 'u')).toBe(false);
    expect(await memberships.isMember('org-a","u', '')).toBe(false);
    expect(inner.queries).toHaveLength(3);
  });

  it('drops the answer of a membership added or removed through it', async () => {
    const clock = movableClock();
    const inner = new FakeMemberships();
    const memberships = new CachedMembershipRepository(inner, clock);
    expect(await memberships.isMember('org-a', 'u')).toBe(false);
    await memberships.add('org-a', 'u', '2026-01-01T00:00:00Z');
    expect(await memberships.isMember('org-a', 'u')).toBe(true);
    await memberships.remove('org-a', 'u');
    expect(await memberships.isMember('org-a', 'u')).toBe(false);
  });

  it('reads the lists through, every time', async () => {
    const inner = new FakeMemberships([{ orgId: 'org-a', userId: 'u' }]);
    const memberships = new CachedMembershipRepository(inner, movableClock());
    expect(await memberships.orgsOf('u')).toEqual(['org-a']);
    await inner.add('org-b', 'u', '2026-01-01T00:00:00Z');
    expect(await memberships.orgsOf('u')).toEqual(['org-a', 'org-b']);
    expect(await memberships.membersOf('org-b')).toEqual(['u']);
  });
});

describe('the cache’s bounds', () => {
  const limits = { ttlMs: 1_000, maxEntries: 10, maxEntriesPerOrg: 4 };

  it('states 1 s, 1,000 entries per port and environment, 100 of them per organization', () => {
    expect(READ_CACHE_LIMITS).toEqual({ ttlMs: 1_000, maxEntries: 1_000, maxEntriesPerOrg: 100 });
  });

  it('never holds more than its maximum, however many organizations read', async () => {
    const cache = new ReadCache<string>(movableClock(), limits);
    for (let org = 0; org < 50; org += 1)
      await cache.read(
        `key-${org}`,
        async () => 'value',
        () => `org-${org}`,
      );
    expect(cache.size).toBe(10);
  });

  it('lets no organization push another’s live entries out, nor take the others’ share', async () => {
    const clock = movableClock();
    const inner = new FakeBoards([
      board('victim-hot', 'org-victim'),
      board('victim-new', 'org-victim'),
      ...Array.from({ length: 50 }, (_, index) => board(`noise-${index}`, 'org-noisy')),
    ]);
    const boards = new CachedBoardRepository(inner, clock, limits);
    await boards.get('victim-hot');
    for (let index = 0; index < 50; index += 1) await boards.get(`noise-${index}`);
    await boards.get('victim-new');
    inner.lookups.length = 0;
    await boards.get('victim-hot');
    await boards.get('victim-new');
    expect(inner.lookups).toEqual([]);
    // The noisy organization is answered correctly, only not kept past its share.
    expect((await boards.get('noise-49'))?.boardId).toBe('noise-49');
    expect(inner.lookups).toEqual(['noise-49']);
  });

  it('makes room by dropping expired entries only', async () => {
    const clock = movableClock();
    const cache = new ReadCache<string>(clock, limits);
    for (let index = 0; index < 4; index += 1)
      await cache.read(
        `old-${index}`,
        async () => 'old',
        () => 'org-a',
      );
    clock.advance(1_000);
    let loads = 0;
    const load = async () => {
      loads += 1;
      return 'new';
    };
    await cache.read('fresh', load, () => 'org-a');
    await cache.read('fresh', load, () => 'org-a');
    expect(loads).toBe(1);
    expect(cache.size).toBe(1);
  });
});
