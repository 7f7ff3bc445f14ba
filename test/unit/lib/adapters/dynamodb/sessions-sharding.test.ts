import { describe, expect, it } from 'vitest';
import { SCOPE_WRITE_SHARDS, sessionShard, shardedScopeKey } from '#lib/adapters/dynamodb/session-items';
import { mergeShardPages } from '#lib/adapters/dynamodb/session-scopes';
import type { ScopePage, SessionRef } from '#lib/domain/ports';

/** `n` sessions of one board: ids and unique, time-ordered positions (`createdAt#id`), oldest first. */
function boardSessions(n: number, seed = 1): SessionRef[] {
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const refs: SessionRef[] = [];
  let time = Date.parse('2026-01-01T00:00:00.000Z');
  for (let i = 0; i < n; i++) {
    // Several sessions in the same millisecond: the id breaks the tie, as in createdKey.
    if (random() < 0.5) time += 1;
    const id = `s-${Math.floor(random() * 1e9).toString(36)}-${i}`;
    refs.push({ id, position: `${new Date(time).toISOString()}#${id}` });
  }
  return refs;
}

/** The shards as DynamoDB would hold them: each a sorted partition, queried newest first below a cursor. */
function shardStore(refs: SessionRef[], shards: number) {
  const byShard = Array.from({ length: shards }, () => [] as SessionRef[]);
  for (const ref of refs) byShard[sessionShard(ref.id, shards)]?.push(ref);
  return (shard: number, below: string | undefined, limit: number): ScopePage => {
    const candidates = (byShard[shard] ?? [])
      .filter((ref) => below === undefined || ref.position < below)
      .sort((a, b) => (a.position < b.position ? 1 : -1));
    const page = candidates.slice(0, limit);
    // DynamoDB sets LastEvaluatedKey when the limit was reached, even if nothing follows.
    return { refs: page, next: page.length === limit ? page[page.length - 1]?.position : undefined };
  };
}

/** Lists a sharded scope page by page, as the list path would; returns every page. */
function listAll(refs: SessionRef[], shards: number, limit: number): ScopePage[] {
  const query = shardStore(refs, shards);
  const pages: ScopePage[] = [];
  let below: string | undefined;
  do {
    const page = mergeShardPages(
      Array.from({ length: shards }, (_, shard) => query(shard, below, limit)),
      limit,
    );
    pages.push(page);
    below = page.next;
    if (pages.length > 10_000) throw new Error('listing does not end');
  } while (below !== undefined);
  return pages;
}

describe('write-sharded scope keys', () => {
  it('put a session in one fixed shard, and spread a board’s sessions evenly over the shards', () => {
    expect(sessionShard('abc')).toBe(sessionShard('abc'));
    const counts = new Array(SCOPE_WRITE_SHARDS).fill(0);
    for (const ref of boardSessions(16_000)) counts[sessionShard(ref.id)]++;
    // 1,000 a shard on average: none more than 15% off, so no shard takes more than its share of writes.
    for (const count of counts) expect(Math.abs(count - 1000)).toBeLessThan(150);
  });

  it('name each shard’s partition key after the scope key', () => {
    expect(shardedScopeKey('board_1', 7)).toBe('board_1#7');
  });
});

describe('listing a sharded scope (mergeShardPages)', () => {
  it.each([
    [1, 50, 1],
    [37, 10, 16],
    [500, 50, 16],
    [500, 7, 16],
    [1000, 100, 3],
  ])('returns %i sessions newest first in pages of %i over %i shards, each once', (n, limit, shards) => {
    const refs = boardSessions(n, n + limit);
    const pages = listAll(refs, shards, limit);
    const listed = pages.flatMap((page) => page.refs.map((ref) => ref.position));
    const expected = refs
      .map((ref) => ref.position)
      .sort()
      .reverse();
    expect(listed).toEqual(expected);
    for (const page of pages.slice(0, -1)) expect(page.refs).toHaveLength(limit);
    expect(pages.at(-1)?.next).toBeUndefined();
  });

  it('gives the same pages as one unsharded index (which may end on an empty page)', () => {
    const refs = boardSessions(300, 9);
    const ids = (pages: ScopePage[]) =>
      pages.filter((page) => page.refs.length > 0).map((page) => page.refs.map((ref) => ref.id));
    const sharded = ids(listAll(refs, 16, 25));
    const single = ids(listAll(refs, 1, 25));
    expect(sharded).toEqual(single);
  });

  it('resumes below the cursor without repeating or skipping a session written meanwhile', () => {
    const refs = boardSessions(120, 3);
    const query = shardStore(refs, 16);
    const first = mergeShardPages(
      Array.from({ length: 16 }, (_, shard) => query(shard, undefined, 50)),
      50,
    );
    // A newer session arrives between pages: it is above the cursor, so later pages never show it.
    const newer: SessionRef = { id: 'newest', position: '2099-01-01T00:00:00.000Z#newest' };
    const after = shardStore([...refs, newer], 16);
    const second = mergeShardPages(
      Array.from({ length: 16 }, (_, shard) => after(shard, first.next, 50)),
      50,
    );
    const seen = [...first.refs, ...second.refs].map((ref) => ref.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).not.toContain('newest');
    expect(String(second.refs[0]?.position) < String(first.next)).toBe(true);
  });

  it('ends with no cursor when every shard is exhausted, and on an empty scope', () => {
    expect(mergeShardPages([{ refs: [], next: undefined }], 10)).toEqual({ refs: [], next: undefined });
    const few = boardSessions(3);
    const page = mergeShardPages([{ refs: [...few].reverse(), next: undefined }], 10);
    expect(page.next).toBeUndefined();
    expect(page.refs).toHaveLength(3);
  });

  it('cuts a page inside a shard that holds more than a page, and resumes inside it', () => {
    // Every session of shard 0 of 16, plus one elsewhere: page boundaries fall inside shard 0.
    const all = boardSessions(400, 5);
    const inZero = all.filter((ref) => sessionShard(ref.id) === 0).slice(0, 12);
    const other = all.find((ref) => sessionShard(ref.id) !== 0) as SessionRef;
    const refs = [...inZero, other];
    const pages = listAll(refs, SCOPE_WRITE_SHARDS, 5);
    expect(pages.map((page) => page.refs.length)).toEqual([5, 5, 3]);
    const listed = pages.flatMap((page) => page.refs.map((ref) => ref.id));
    expect(listed).toEqual([...refs].sort((a, b) => (a.position < b.position ? 1 : -1)).map((ref) => ref.id));
  });

  it('orders sessions created in the same millisecond in different shards by id, each once', () => {
    const createdAt = '2026-01-01T00:00:00.000Z';
    const refs = Array.from({ length: 40 }, (_, i) => {
      const id = `same-${String(i).padStart(2, '0')}`;
      return { id, position: `${createdAt}#${id}` };
    });
    expect(new Set(refs.map((ref) => sessionShard(ref.id))).size).toBeGreaterThan(4);
    const listed = listAll(refs, SCOPE_WRITE_SHARDS, 3).flatMap((page) => page.refs.map((ref) => ref.id));
    expect(listed).toEqual(refs.map((ref) => ref.id).reverse());
  });

  it('neither skips nor repeats a session when filtered shard pages stop short of the limit', () => {
    // A user's scope narrowed to one board: DynamoDB applies Limit before the filter, so a shard page can
    // hold fewer matches than the limit (even none) and still have more below its last evaluated key.
    const refs = boardSessions(2_000, 11);
    const onBoard = (ref: SessionRef) => Number.parseInt(ref.id.split('-')[1] ?? '0', 36) % 20 === 0;
    const byShard = Array.from({ length: SCOPE_WRITE_SHARDS }, () => [] as SessionRef[]);
    for (const ref of refs) byShard[sessionShard(ref.id)]?.push(ref);
    for (const shard of byShard) shard.sort((a, b) => (a.position < b.position ? 1 : -1));
    const query = (shard: number, below: string | undefined, limit: number): ScopePage => {
      const evaluated = (byShard[shard] ?? [])
        .filter((ref) => below === undefined || ref.position < below)
        .slice(0, limit);
      return {
        refs: evaluated.filter(onBoard),
        next: evaluated.length === limit ? evaluated[evaluated.length - 1]?.position : undefined,
      };
    };
    const listed: string[] = [];
    let below: string | undefined;
    let pages = 0;
    do {
      const page = mergeShardPages(
        Array.from({ length: SCOPE_WRITE_SHARDS }, (_, shard) => query(shard, below, 10)),
        10,
      );
      listed.push(...page.refs.map((ref) => ref.position));
      below = page.next;
      if (++pages > 10_000) throw new Error('listing does not end');
    } while (below !== undefined);
    const expected = refs
      .filter(onBoard)
      .map((ref) => ref.position)
      .sort()
      .reverse();
    expect(expected.length).toBeGreaterThan(50);
    expect(listed).toEqual(expected);
  });
});
