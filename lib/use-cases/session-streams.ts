/**
 * Reading a selection of sessions across several index scopes: ScopeMerge merges the scopes' streams
 * newest first, each session once, and TenantFilter keeps, of a selection by external user id, the
 * sessions of the caller's tenant. The listing and the revocation by user or board use both.
 */
import type { KeyOwner } from '#lib/domain/api-key';
import type {
  MembershipRepository,
  ScopePartition,
  SessionPosition,
  SessionRef,
  SessionRepository,
  SessionScope,
} from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { legacyTenant, type Tenant } from '#lib/domain/tenant';

/** A session of a merged stream, and the scope it was read from. */
export type ScopedRef = SessionRef & { scope: SessionScope };

/**
 * Decides, for a listing or a revocation by external user id, whether a session belongs to the caller's
 * tenant. External user ids are the tenants' own, so two tenants may both have a "42". An organization's
 * scope holds every session on its boards, including those another tenant created on one of its public
 * boards for its own "42": those stay reachable by id and by board, but a selection by user id takes
 * only the sessions the caller created or a current member of that organization created.
 */
export class TenantFilter {
  /** Organization id -> creator -> whether the creator is a member: one lookup per pair and listing. */
  private readonly members = new Map<string, Map<string, Promise<boolean>>>();

  constructor(
    private readonly memberships: MembershipRepository,
    private readonly caller: KeyOwner,
  ) {}

  /**
   * Which of these sessions are the caller's tenant's, in order. Most are decided on the spot (the
   * caller's own, or reached through its own scope); a creator's membership is looked up once per listing.
   */
  async admitted(refs: readonly ScopedRef[]): Promise<boolean[]> {
    const verdicts: boolean[] = new Array(refs.length);
    const lookups: Promise<void>[] = [];
    for (let i = 0; i < refs.length; i++) {
      const verdict = this.verdict(refs[i] as ScopedRef);
      if (typeof verdict === 'boolean') {
        verdicts[i] = verdict;
      } else {
        lookups.push(
          verdict.then((member) => {
            verdicts[i] = member;
          }),
        );
      }
    }
    if (lookups.length > 0) await Promise.all(lookups);
    return verdicts;
  }

  /**
   * Whether a session the caller may access was created by its own tenant: by the caller, or by a current
   * member of the organization that owns the session's board. Otherwise another tenant created it on one
   * of that organization's public boards: the caller sees only its outline (`OtherTenantSessionView`).
   */
  ownTenant(session: Pick<StoredSession, 'orgId' | 'createdByUserId'>): boolean | Promise<boolean> {
    return this.createdWithin(session.orgId, session.createdByUserId);
  }

  private verdict(ref: ScopedRef): boolean | Promise<boolean> {
    if (ref.scope.kind !== 'orgUser') return true;
    return this.createdWithin(ref.scope.orgId, ref.createdByUserId ?? '');
  }

  /** True when `creator` is the caller or a current member of `orgId` (looked up once per pair). */
  private createdWithin(orgId: string, creator: string): boolean | Promise<boolean> {
    if (creator === '') return false;
    if (creator === this.caller.userId) return true;
    if (orgId === '') return false;
    let ofOrg = this.members.get(orgId);
    if (!ofOrg) {
      ofOrg = new Map();
      this.members.set(orgId, ofOrg);
    }
    let member = ofOrg.get(creator);
    if (!member) {
      member = this.memberships.isMember(orgId, creator);
      ofOrg.set(creator, member);
    }
    return member;
  }
}

/**
 * The tenant of a session known only from an index entry, which holds no tenant (the tenant is decided
 * when a session is created, and stored with it only): its board's organization when its creator's
 * current membership of it began at or before the session's creation, else its creator. It is the stored
 * tenant unless the creator's membership changed since (left the organization, or left and joined again),
 * or the session was stored before tenants were (its organization's then, whoever created it). One
 * consistent membership read per creator and organization, however many sessions ask.
 */
export class TenantGuess {
  private readonly since = new Map<string, Promise<string | null | undefined>>();

  constructor(private readonly memberships: MembershipRepository) {}

  async of(session: Pick<StoredSession, 'orgId' | 'createdByUserId' | 'createdAt'>): Promise<Tenant> {
    const { orgId, createdByUserId } = session;
    if (orgId === '' || createdByUserId === '') return legacyTenant(orgId);
    return TenantGuess.tenantAt(await this.memberSince(orgId, createdByUserId), session);
  }

  /** When `creator`'s current membership of `orgId` began (`MembershipRepository.memberSince`), read once. */
  memberSince(orgId: string, creator: string): Promise<string | null | undefined> {
    const key = JSON.stringify([orgId, creator]);
    let since = this.since.get(key);
    if (!since) {
      since = this.memberships.memberSince(orgId, creator);
      this.since.set(key, since);
    }
    return since;
  }

  /** The tenant of a session of `orgId` by its creator, whose membership began at `since` (as read). */
  static tenantAt(
    since: string | null | undefined,
    session: Pick<StoredSession, 'orgId' | 'createdByUserId' | 'createdAt'>,
  ): Tenant {
    const member = since !== undefined && (since === null || since <= session.createdAt);
    return member
      ? { kind: 'organization', id: session.orgId }
      : { kind: 'keyOwner', id: session.createdByUserId };
  }

  /**
   * The tenant of each session, in order: the membership of each distinct creator read once, side by
   * side, and nothing awaited per session (a count may ask for 100,000).
   */
  async ofAll(
    sessions: ReadonlyArray<Pick<StoredSession, 'orgId' | 'createdByUserId' | 'createdAt'>>,
  ): Promise<Tenant[]> {
    // Nested by organization, then creator: no string built per session.
    const read = new Map<string, Map<string, string | null | undefined>>();
    const lookups: Promise<void>[] = [];
    for (const { orgId, createdByUserId } of sessions) {
      if (orgId === '' || createdByUserId === '') continue;
      let ofOrg = read.get(orgId);
      if (!ofOrg) {
        ofOrg = new Map();
        read.set(orgId, ofOrg);
      }
      if (ofOrg.has(createdByUserId)) continue;
      const creators = ofOrg;
      creators.set(createdByUserId, undefined);
      lookups.push(
        this.memberSince(orgId, createdByUserId).then((since) => void creators.set(createdByUserId, since)),
      );
    }
    await Promise.all(lookups);
    return sessions.map((session) =>
      session.orgId === '' || session.createdByUserId === ''
        ? legacyTenant(session.orgId)
        : TenantGuess.tenantAt(read.get(session.orgId)?.get(session.createdByUserId), session),
    );
  }
}

interface PartitionState {
  scope: SessionScope;
  partition: ScopePartition;
  /** How many partitions its scope has: each reads its share of a batch. */
  of: number;
  buffer: SessionRef[];
  /** Where the next page of this partition starts (exclusive); undefined before the first read. */
  below: SessionPosition | undefined;
  done: boolean;
}

/**
 * The sessions of several scopes as one newest-first stream, read page by page only as far as it is
 * consumed. Each scope is stored in partitions (its index's write shards), and the merge is over every
 * partition of every scope: a partition is read again only when its buffer runs dry and its next session
 * could be the newest, so what is read beyond what is consumed is at most one partition page per
 * partition, never a whole page per partition per batch. A session present in two scopes (its creator is
 * also a member) comes out once: positions are unique per session, so equal heads are the same session.
 */
export class ScopeMerge {
  private readonly states: PartitionState[];
  private last: SessionPosition | undefined;

  constructor(
    sessions: SessionRepository,
    scopes: readonly SessionScope[],
    below: SessionPosition | undefined,
    private pageSize: number,
  ) {
    this.states = scopes.flatMap((scope) => {
      const partitions = sessions.scopePartitions(scope);
      return partitions.map((partition) => ({
        scope,
        partition,
        of: partitions.length,
        buffer: [],
        below,
        done: false,
      }));
    });
  }

  /** Expects batches of `pageSize` sessions from now on. */
  readAhead(pageSize: number): void {
    this.pageSize = pageSize;
  }

  /**
   * The next `count` sessions, each with the scope it came from; fewer only once every scope is
   * exhausted. One promise per call, not per session: partitions are read only when a buffer runs dry.
   */
  async take(count: number): Promise<ScopedRef[]> {
    const taken: ScopedRef[] = [];
    while (taken.length < count) {
      if (this.anyToFill()) await Promise.all(this.states.map((state) => this.fill(state)));
      const head = this.head();
      if (!head) break;
      const ref = head.buffer.shift() as SessionRef;
      if (ref.position === this.last) continue;
      this.last = ref.position;
      taken.push({ ...ref, scope: head.scope });
    }
    return taken;
  }

  /** True while at least one more session may follow. */
  async hasMore(): Promise<boolean> {
    for (;;) {
      if (this.anyToFill()) await Promise.all(this.states.map((state) => this.fill(state)));
      const head = this.head();
      if (!head) return false;
      if (head.buffer[0]?.position !== this.last) return true;
      head.buffer.shift();
    }
  }

  private anyToFill(): boolean {
    for (const state of this.states) if (state.buffer.length === 0 && !state.done) return true;
    return false;
  }

  /** The partition whose next session is the newest (every buffer that can be filled is). */
  private head(): PartitionState | undefined {
    let best: PartitionState | undefined;
    for (const state of this.states) {
      const candidate = state.buffer[0];
      if (candidate && (!best || candidate.position > (best.buffer[0] as SessionRef).position)) best = state;
    }
    return best;
  }

  private async fill(state: PartitionState): Promise<void> {
    // Its share of a batch, and one more where a scope has several partitions: sessions spread evenly over
    // them (by a hash of their id), so most batches are served by one read of each.
    const limit = Math.ceil(this.pageSize / state.of) + (state.of > 1 ? 1 : 0);
    // A filtered page can be empty and still have more after it.
    while (state.buffer.length === 0 && !state.done) {
      const page = await state.partition.page({
        ...(state.below !== undefined ? { below: state.below } : {}),
        limit,
      });
      state.buffer = page.refs;
      state.below = page.next;
      state.done = page.next === undefined;
    }
  }
}
