/**
 * The per-environment cache of boards and memberships: decorators of the two ports that keep what they
 * read for at most `ttlMs` (1 s), so one hot board costs one read per execution environment per second
 * instead of one per request, and a change takes effect within that second. Nothing else is cached here:
 * sessions, their cut-off records and revocations are read on every request, and neither port carries a
 * credential.
 */
import type { Board } from '#lib/domain/board';
import type { BoardRepository, Clock, MembershipRepository } from '#lib/domain/ports';

export interface ReadCacheLimits {
  /** How long an entry is served after the read that filled it started. */
  ttlMs: number;
  /** Entries one cache holds at most (one cache per port per execution environment). */
  maxEntries: number;
  /** Entries of one organization at most, so no tenant fills the space the others' hot entries need. */
  maxEntriesPerOrg: number;
}

/**
 * The limits docs/scale.md and docs/operations.md state. An environment serves one request at a time and
 * each request reads at most one board and one membership, so in one second it meets far fewer keys
 * than these bounds: they are reached only by a tenant reading many distinct keys on purpose, and then
 * its own entries stop being cached while every other tenant's stay.
 */
export const READ_CACHE_LIMITS: ReadCacheLimits = { ttlMs: 1_000, maxEntries: 1_000, maxEntriesPerOrg: 100 };

interface Entry<V> {
  value: V;
  orgId: string;
  expiresAtMs: number;
}

/**
 * A bounded map of entries that expire `ttlMs` after their read started. A live entry is never evicted
 * to make room: when the cache (or the organization's share of it) is full of live entries, a new read
 * is answered but not kept, so one tenant's reads can neither grow the cache nor push another's out.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly perOrg = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly limits: ReadCacheLimits = READ_CACHE_LIMITS,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * The value under `key`, from the cache while its entry lives, else from `load`; `orgOf` names the
   * organization a loaded value belongs to, or undefined for a value that must not be kept.
   */
  async read(key: string, load: () => Promise<V>, orgOf: (value: V) => string | undefined): Promise<V> {
    const startedMs = this.clock.now().getTime();
    const entry = this.entries.get(key);
    if (entry && startedMs < entry.expiresAtMs) return entry.value;
    if (entry) this.forget(key);
    const value = await load();
    const orgId = orgOf(value);
    // Aged from when the read started: the value may reflect the table as early as then.
    if (orgId !== undefined) this.admit(key, { value, orgId, expiresAtMs: startedMs + this.limits.ttlMs });
    return value;
  }

  /** Drops the entry under `key`, if any: a write through this environment is seen by its next read. */
  forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    const count = (this.perOrg.get(entry.orgId) ?? 1) - 1;
    if (count === 0) this.perOrg.delete(entry.orgId);
    else this.perOrg.set(entry.orgId, count);
  }

  private admit(key: string, entry: Entry<V>): void {
    this.forget(key);
    if (this.isFull(entry.orgId)) this.dropExpired();
    if (this.isFull(entry.orgId)) return;
    this.entries.set(key, entry);
    this.perOrg.set(entry.orgId, (this.perOrg.get(entry.orgId) ?? 0) + 1);
  }

  private isFull(orgId: string): boolean {
    return (
      this.entries.size >= this.limits.maxEntries ||
      (this.perOrg.get(orgId) ?? 0) >= this.limits.maxEntriesPerOrg
    );
  }

  /** At most `maxEntries` steps, and only when a bound is reached. */
  private dropExpired(): void {
    const nowMs = this.clock.now().getTime();
    for (const [key, entry] of this.entries) if (nowMs >= entry.expiresAtMs) this.forget(key);
  }
}

/**
 * Boards, each kept for at most a second after it was read. Only a board that exists is kept: a board id
 * is the caller's choice, so unknown ids would otherwise take space, and a board created a moment ago is
 * seen at once. A write or delete through this environment drops its entry when it is done.
 */
export class CachedBoardRepository implements BoardRepository {
  private readonly cache: ReadCache<Board | undefined>;

  constructor(
    private readonly inner: BoardRepository,
    clock: Clock,
    limits: ReadCacheLimits = READ_CACHE_LIMITS,
  ) {
    this.cache = new ReadCache(clock, limits);
  }

  get(boardId: string): Promise<Board | undefined> {
    return this.cache.read(
      boardId,
      () => this.inner.get(boardId),
      (board) => board?.orgId,
    );
  }

  async put(board: Board): Promise<boolean> {
    try {
      return await this.inner.put(board);
    } finally {
      this.cache.forget(board.boardId);
    }
  }

  list(): Promise<Board[]> {
    return this.inner.list();
  }

  listOfOrg(orgId: string): Promise<Board[]> {
    return this.inner.listOfOrg(orgId);
  }

  async delete(boardId: string, orgId: string): Promise<boolean> {
    try {
      return await this.inner.delete(boardId, orgId);
    } finally {
      this.cache.forget(boardId);
    }
  }
}

/**
 * Memberships, each answer of `isMember` (yes or no) kept for at most a second, keyed by organization and
 * user: a public board's creator that is not a member is asked about as often as a member. The lists
 * (`orgsOf`, `membersOf`) are read through: they serve operators and listings, not the hot path.
 */
export class CachedMembershipRepository implements MembershipRepository {
  private readonly cache: ReadCache<boolean>;

  constructor(
    private readonly inner: MembershipRepository,
    clock: Clock,
    limits: ReadCacheLimits = READ_CACHE_LIMITS,
  ) {
    this.cache = new ReadCache(clock, limits);
  }

  isMember(orgId: string, userId: string): Promise<boolean> {
    return this.cache.read(
      membershipKey(orgId, userId),
      () => this.inner.isMember(orgId, userId),
      () => orgId,
    );
  }

  orgsOf(userId: string): Promise<string[]> {
    return this.inner.orgsOf(userId);
  }

  membersOf(orgId: string): Promise<string[]> {
    return this.inner.membersOf(orgId);
  }

  /** Read through: a revoke-all's count asks it once per creator, and it must see a removal at once. */
  memberSince(orgId: string, userId: string): Promise<string | null | undefined> {
    return this.inner.memberSince(orgId, userId);
  }

  async add(orgId: string, userId: string, addedAt: string, addedBy?: string): Promise<void> {
    try {
      await this.inner.add(orgId, userId, addedAt, addedBy);
    } finally {
      this.cache.forget(membershipKey(orgId, userId));
    }
  }

  async remove(orgId: string, userId: string): Promise<boolean> {
    try {
      return await this.inner.remove(orgId, userId);
    } finally {
      this.cache.forget(membershipKey(orgId, userId));
    }
  }
}

/** Both ids, unambiguously: no pair of other ids joins to the same key. */
function membershipKey(orgId: string, userId: string): string {
  return JSON.stringify([orgId, userId]);
}
