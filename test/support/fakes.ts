import { SCOPE_WRITE_SHARDS, sessionShard } from '#lib/adapters/dynamodb/session-items';
import { mergeShardPages } from '#lib/adapters/dynamodb/session-scopes';
import type { ApiKeyRecord, RateLimit } from '#lib/domain/api-key';
import type { Board } from '#lib/domain/board';
import * as Cutoffs from '#lib/domain/cutoffs';
import {
  fairShareWaitSeconds,
  WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
} from '#lib/domain/destinations';
import { StorageUnavailableError } from '#lib/domain/errors';
import type * as Ports from '#lib/domain/ports';
import type { SessionBinding, StoredSession } from '#lib/domain/session';

/** Records in memory under a key of each, remembering every key looked up (`lookups`), in order. */
class RecordedLookups<T> {
  readonly lookups: string[] = [];
  protected readonly records = new Map<string, T>();

  constructor(records: T[], keyOf: (record: T) => string) {
    for (const record of records) this.records.set(keyOf(record), record);
  }

  protected lookup(key: string): T | undefined {
    this.lookups.push(key);
    return this.records.get(key);
  }
}

/** In-memory boards that record every lookup. */
export class FakeBoards extends RecordedLookups<Board> implements Ports.BoardRepository {
  constructor(boards: Board[] = []) {
    super(boards, (board) => board.boardId);
  }

  async get(boardId: string): Promise<Board | undefined> {
    return this.lookup(boardId);
  }

  async put(board: Board): Promise<boolean> {
    const existing = this.records.get(board.boardId);
    if (existing && existing.orgId !== board.orgId) return false;
    this.records.set(board.boardId, board);
    return true;
  }

  async list(): Promise<Board[]> {
    return [...this.records.values()];
  }

  async listOfOrg(orgId: string): Promise<Board[]> {
    return [...this.records.values()]
      .filter((board) => board.orgId === orgId)
      .sort((a, b) => a.boardId.localeCompare(b.boardId));
  }

  async delete(boardId: string, orgId: string): Promise<boolean> {
    if (this.records.get(boardId)?.orgId !== orgId) return false;
    return this.records.delete(boardId);
  }
}

/** In-memory organization memberships that record every `isMember` query. */
export class FakeMemberships implements Ports.MembershipRepository {
  readonly queries: Array<{ orgId: string; userId: string }> = [];
  private readonly members = new Set<string>();
  /** When each membership began, where it was given (`add`, or `addedAt` in the constructor). */
  private readonly since = new Map<string, string>();

  constructor(members: Array<{ orgId: string; userId: string; addedAt?: string }> = []) {
    for (const { orgId, userId, addedAt } of members) {
      this.members.add(`${orgId}\u0000${userId}`);
      if (addedAt !== undefined) this.since.set(`${orgId}\u0000${userId}`, addedAt);
    }
  }

  async memberSince(orgId: string, userId: string): Promise<string | null | undefined> {
    this.queries.push({ orgId, userId });
    const key = `${orgId}\u0000${userId}`;
    if (!this.members.has(key)) return undefined;
    return this.since.get(key) ?? null;
  }

  async isMember(orgId: string, userId: string): Promise<boolean> {
    this.queries.push({ orgId, userId });
    return this.members.has(`${orgId}\u0000${userId}`);
  }

  async orgsOf(userId: string): Promise<string[]> {
    return [...this.members]
      .map((key) => key.split('\u0000'))
      .filter(([, member]) => member === userId)
      .map(([orgId]) => orgId as string)
      .sort();
  }

  async membersOf(orgId: string): Promise<string[]> {
    return [...this.members]
      .map((key) => key.split('\u0000'))
      .filter(([org]) => org === orgId)
      .map(([, userId]) => userId as string)
      .sort();
  }

  readonly added: Array<{ orgId: string; userId: string; addedAt: string; addedBy?: string }> = [];

  async add(orgId: string, userId: string, addedAt: string, addedBy?: string): Promise<void> {
    this.added.push({ orgId, userId, addedAt, ...(addedBy !== undefined ? { addedBy } : {}) });
    this.members.add(`${orgId}\u0000${userId}`);
    this.since.set(`${orgId}\u0000${userId}`, addedAt);
  }

  async remove(orgId: string, userId: string): Promise<boolean> {
    this.since.delete(`${orgId}\u0000${userId}`);
    return this.members.delete(`${orgId}\u0000${userId}`);
  }
}

/**
 * In-memory sessions that behave like the DynamoDB adapter: `create` refuses an existing id like the
 * conditional put, scopes are read newest first in pages, revocations keep the first one. Every call is
 * recorded in `calls`.
 */
export class FakeSessions implements Ports.SessionRepository, Ports.CoveredSessions, Ports.CutoffRecordStore {
  readonly calls: string[] = [];
  /** Parts of a covered scope, as the adapter's write shards (each session in the part its id says). */
  readonly coveredParts = SCOPE_WRITE_SHARDS;
  /** The page size of every covered page read, in order. */
  readonly coveredLimits: number[] = [];
  /** The page size of every scope read, in order. */
  readonly scanLimits: number[] = [];
  private readonly byId = new Map<string, StoredSession>();
  /** When set, `create` rejects with it (a storage failure). */
  failWith: Error | undefined;

  constructor(sessions: StoredSession[] = []) {
    for (const session of sessions) this.byId.set(session.id, structuredClone(session));
  }

  /** Every stored session, in creation order. */
  get created(): StoredSession[] {
    return [...this.byId.values()];
  }

  async create(session: StoredSession): Promise<StoredSession> {
    this.calls.push('create');
    if (this.failWith) throw this.failWith;
    const existing = this.byId.get(session.id);
    // The same session written before (same token hash) is the success it was, as in the adapter.
    if (existing?.tokenHash === session.tokenHash) return structuredClone(existing);
    if (existing) throw new Error(`session ${session.id} exists`);
    this.byId.set(session.id, structuredClone(session));
    return structuredClone(session);
  }

  async lookupToken(tokenHash: string): Promise<Ports.TokenMatch | undefined> {
    this.calls.push('lookupToken');
    const found = this.created.find((s) => s.tokenHash === tokenHash);
    return (
      found && {
        id: found.id,
        boardId: found.boardId,
        orgId: found.orgId,
        userId: found.userId,
        createdByUserId: found.createdByUserId,
        createdByKeyId: found.createdByKeyId,
      }
    );
  }

  /** When set, a write to the cut-off record of a scope whose key it accepts fails (storage unavailable). */
  failCutoffWrites: ((scopeKey: string) => boolean) | undefined;

  /** Cut-off records by scope key, as the adapter keeps them: merged by `mergeCutoff` on every write. */
  private readonly cutoffs = new Map<
    string,
    { scope: Cutoffs.CutoffScope; entries: Cutoffs.CutoffEntry[]; coversUntil?: number }
  >();

  /**
   * The session through `get` (so it is recorded, and can be replaced, as the one consistent read of the
   * session it is), with the records of its scopes applied as the adapter's single BatchGetItem does.
   */
  async getCovered(match: Ports.TokenMatch): Promise<StoredSession | undefined> {
    const found = await this.get(match.id);
    return found && Cutoffs.withCutoffs(found, this.recordsOf(Cutoffs.cutoffScopesOf(match)));
  }

  async readCutoffs(scopes: readonly Cutoffs.CutoffScope[]): Promise<Cutoffs.CutoffRecord[]> {
    this.calls.push('readCutoffs');
    return this.recordsOf(scopes);
  }

  async applyCutoffs(sessions: readonly StoredSession[]): Promise<StoredSession[]> {
    this.calls.push('applyCutoffs');
    return sessions.map((session) =>
      Cutoffs.withCutoffs(session, this.recordsOf(Cutoffs.cutoffScopesOf(session))),
    );
  }

  async writeCutoff(scopes: readonly Cutoffs.CutoffScope[], write: Cutoffs.CutoffWrite): Promise<void> {
    this.calls.push('writeCutoff');
    for (const scope of scopes) {
      const key = Cutoffs.cutoffScopeKey(scope);
      if (this.failCutoffWrites?.(key)) throw new StorageUnavailableError();
      const merged = Cutoffs.mergeCutoff(this.cutoffs.get(key), write);
      this.legacy.delete(key);
      this.cutoffs.set(key, {
        scope,
        entries: merged.entries,
        ...(merged.coversUntil !== undefined ? { coversUntil: merged.coversUntil } : {}),
      });
    }
  }

  async removeCutoffEntry(scopes: readonly Cutoffs.CutoffScope[], entryId: string): Promise<void> {
    this.calls.push('removeCutoffEntry');
    for (const scope of scopes) {
      const record = this.cutoffs.get(Cutoffs.cutoffScopeKey(scope));
      if (record) record.entries = record.entries.filter((entry) => entry.id !== entryId);
    }
  }

  /** The keys of the records stored as written before records were bounded (`storeLegacyCutoff`). */
  private readonly legacy = new Set<string>();

  /** Stores a record as written before records were bounded: no revision, no expiry, as `entries` say. */
  storeLegacyCutoff(scope: Cutoffs.CutoffScope, entries: Cutoffs.CutoffEntry[]): void {
    const key = Cutoffs.cutoffScopeKey(scope);
    this.cutoffs.set(key, { scope, entries });
    this.legacy.add(key);
  }

  async legacyCutoffs(): Promise<Cutoffs.CutoffRecord[]> {
    this.calls.push('legacyCutoffs');
    return [...this.legacy].flatMap((key) => {
      const record = this.cutoffs.get(key);
      return record ? [{ ...record, entries: [...record.entries] }] : [];
    });
  }

  async replaceLegacyCutoff(record: Cutoffs.CutoffRecord & { coversUntil: number }): Promise<boolean> {
    this.calls.push('replaceLegacyCutoff');
    const key = Cutoffs.cutoffScopeKey(record.scope);
    if (!this.legacy.delete(key)) return false;
    this.cutoffs.set(key, {
      scope: record.scope,
      entries: [...record.entries],
      coversUntil: record.coversUntil,
    });
    return true;
  }

  /** The fake keeps one record per scope: there are no copies to make. */
  async copyCutoffs(_now: string): Promise<Ports.CutoffCopying> {
    this.calls.push('copyCutoffs');
    return { records: this.cutoffs.size, copiesWritten: 0, unfinished: 0 };
  }

  async extendCutoffExpiry(scope: Cutoffs.CutoffScope, until: number): Promise<void> {
    this.calls.push('extendCutoffExpiry');
    const record = this.cutoffs.get(Cutoffs.cutoffScopeKey(scope));
    if (record && (record.coversUntil === undefined || record.coversUntil < until))
      record.coversUntil = until;
  }

  /**
   * Every cut-off record held, as the table would: its scope's key, its entries as stored, and when it
   * expires (`cutoffRecordExpiry`: undefined for never).
   */
  storedCutoffs(): Array<{
    key: string;
    entries: Cutoffs.CutoffEntry[];
    coversUntil?: number;
    expiry: number | undefined;
  }> {
    return [...this.cutoffs].map(([key, record]) => ({
      key,
      entries: [...record.entries],
      ...(record.coversUntil !== undefined ? { coversUntil: record.coversUntil } : {}),
      expiry: Cutoffs.cutoffRecordExpiry(record),
    }));
  }

  /** Index entries the count's queries read (`scopeCandidates`), in all. */
  candidatesRead = 0;

  /** The sessions of the scope active at `at`, as the adapter reads them from the index. */
  async scopeCandidates(
    scope: Ports.SessionScope,
    at: string,
    options: { exceptOrgs?: readonly string[]; after?: string } = {},
  ): Promise<Ports.CountCandidate[]> {
    this.calls.push(`scopeCandidates:${scope.kind}`);
    const read = this.created.filter(
      (found) =>
        inScope(found, scope) &&
        found.createdAt <= at &&
        (options.after === undefined || found.createdAt > options.after),
    );
    // What the index query reads (its key condition), before its filter drops any.
    this.candidatesRead += read.length;
    return read
      .filter(
        (found) =>
          found.expiresAt > at &&
          found.revokedAt === null &&
          !(options.exceptOrgs ?? []).includes(found.orgId),
      )
      .map((found) => ({
        id: found.id,
        orgId: found.orgId,
        userId: found.userId,
        boardId: found.boardId,
        createdByUserId: found.createdByUserId,
        createdAt: found.createdAt,
        expiresAt: found.expiresAt,
      }));
  }

  async listAll(): Promise<StoredSession[]> {
    this.calls.push('listAll');
    return this.created;
  }

  private readonly parts = new Map<string, number>();
  private partOf(id: string): number {
    let part = this.parts.get(id);
    if (part === undefined) {
      part = sessionShard(id, this.coveredParts);
      this.parts.set(id, part);
    }
    return part;
  }

  /** A page of one part of the scope, oldest first, as the adapter reads it (its filter applied). */
  async coveredPage(
    scope: Ports.CoveredScope,
    part: number,
    range: Ports.CoveredRange,
    options: { after?: string; limit: number },
  ): Promise<Ports.CoveredPage> {
    this.calls.push(`coveredPage:${scope.kind}`);
    this.coveredLimits.push(options.limit);
    const all = this.created
      .filter(
        (session) =>
          coveredBy(session, scope) &&
          this.partOf(session.id) === part &&
          (range.since === undefined || session.createdAt > range.since) &&
          session.createdAt <= range.upTo &&
          session.expiresAt >= range.upTo &&
          session.revokedAt === null,
      )
      .map((session) => ({ session, position: `${session.createdAt}#${session.id}` }))
      .filter(({ position }) => options.after === undefined || position > options.after)
      .sort((a, b) => (a.position < b.position ? -1 : 1));
    const page = all.slice(0, options.limit);
    const more = all.length > options.limit;
    return {
      sessions: page.map(({ session }) => structuredClone(session)),
      ...(more ? { next: page[page.length - 1]?.position } : {}),
    };
  }

  private recordsOf(scopes: readonly Cutoffs.CutoffScope[]): Cutoffs.CutoffRecord[] {
    const records: Cutoffs.CutoffRecord[] = [];
    for (const key of new Set(scopes.map(Cutoffs.cutoffScopeKey))) {
      const record = this.cutoffs.get(key);
      if (record) records.push({ ...record, entries: [...record.entries] });
    }
    return records;
  }

  async get(id: string): Promise<StoredSession | undefined> {
    this.calls.push('get');
    const found = this.byId.get(id);
    if (found) this.sessionsRead += 1;
    return found && structuredClone(found);
  }

  async getMany(ids: readonly string[]): Promise<StoredSession[]> {
    this.calls.push('getMany');
    return ids.flatMap((id) => {
      const found = this.byId.get(id);
      if (found) this.sessionsRead += 1;
      return found ? [structuredClone(found)] : [];
    });
  }

  async queryScope(
    scope: Ports.SessionScope,
    options: { below?: string; limit: number },
  ): Promise<Ports.ScopePage> {
    this.calls.push(`queryScope:${scope.kind}`);
    // As the adapter: each partition's newest `limit`, merged.
    const pages = Array.from({ length: this.partitions }, (_, partition) =>
      this.pageOf(scope, (session) => partitionOf(session.id, this.partitions) === partition, options),
    );
    for (const page of pages) this.indexEntriesRead += page.refs.length;
    return mergeShardPages(pages, options.limit);
  }

  /**
   * How many partitions each scope is stored in, as the adapter's write shards (a session's partition
   * is fixed by its id); 1 unless a test sets it.
   */
  partitions = 1;
  /** What the scope indexes still hold of a session that changed since (`lagIndex`), by id. */
  private readonly indexLags = new Map<string, Partial<Ports.IndexedState>>();

  /** Makes the scope indexes hold `state` for the session until told otherwise: an index lagging a write. */
  lagIndex(id: string, state: Partial<Ports.IndexedState>): void {
    this.indexLags.set(id, state);
  }

  /** Index entries the partitions' pages returned, in all. */
  indexEntriesRead = 0;
  /** The session states read from the table (`statesOf`), in all. */
  statesRead = 0;
  /** The whole sessions read (`get`, `getMany`), in all. */
  sessionsRead = 0;

  scopePartitions(scope: Ports.SessionScope): Ports.ScopePartition[] {
    return Array.from({ length: this.partitions }, (_, partition) => ({
      page: async (options: { below?: string; limit: number }) => {
        this.calls.push(`scopePartition:${scope.kind}`);
        const page = this.pageOf(
          scope,
          (session) => partitionOf(session.id, this.partitions) === partition,
          options,
        );
        this.indexEntriesRead += page.refs.length;
        return page;
      },
    }));
  }

  async statesOf(ids: readonly string[]) {
    this.calls.push('statesOf');
    const found = ids.flatMap((id) => {
      const session = this.byId.get(id);
      return session ? [{ id, createdAt: session.createdAt, ...stateOf(session) }] : [];
    });
    this.statesRead += found.length;
    return found;
  }

  /** A page of a scope (or of one partition of it) as the index holds it: the state where it projects it. */
  private pageOf(
    scope: Ports.SessionScope,
    inPartition: (session: StoredSession) => boolean,
    options: { below?: string; limit: number },
  ): Ports.ScopePage {
    this.scanLimits.push(options.limit);
    const all = this.created
      .filter((session) => inScope(session, scope) && inPartition(session))
      .map((session) => ({
        id: session.id,
        position: `${session.createdAt}#${session.id}`,
        ...(scope.kind === 'orgUser' ? { createdByUserId: session.createdByUserId } : {}),
        ...(scope.kind !== 'creatorBoard'
          ? { state: { ...stateOf(session), ...this.indexLags.get(session.id) } }
          : {}),
      }))
      .filter((ref) => options.below === undefined || ref.position < options.below)
      .sort((a, b) => (a.position < b.position ? 1 : -1));
    const refs = all.slice(0, options.limit);
    const more = all.length > options.limit;
    return { refs, next: more ? refs[refs.length - 1]?.position : undefined };
  }

  async revoke(id: string, revocation: StoredRevocation): Promise<StoredSession | undefined> {
    this.calls.push('revoke');
    this.apply(id, revocation);
    return this.get(id);
  }

  /** Binds like the conditional update: only a binding, unbound, unrevoked session, once. */
  async bind(id: string, binding: SessionBinding): Promise<boolean> {
    this.calls.push('bind');
    const session = this.byId.get(id);
    if (!session?.bindToBrowser || session.bindingHash !== null || session.revokedAt !== null) {
      return false;
    }
    session.bindingHash = binding.bindingHash;
    session.boundAt = binding.boundAt;
    return true;
  }
  async markOpened(id: string, openedAt: string): Promise<void> {
    this.calls.push('markOpened');
    const session = this.byId.get(id);
    if (session && typeof session.openedAt !== 'string') session.openedAt = openedAt;
  }
  async unbind(id: string, hash: string): Promise<void> {
    this.calls.push('unbind');
    const session = this.byId.get(id);
    if (session?.bindingHash !== hash) return;
    session.bindingHash = null;
    session.boundAt = null;
  }

  async listAllOfUser(userId: string): Promise<StoredSession[]> {
    this.calls.push('listAllOfUser');
    return this.created.filter((session) => session.userId === userId);
  }

  /** Revokes the session as a single revocation does (a test's shortcut); false when already revoked. */
  async markRevoked(id: string, revocation: StoredRevocation): Promise<boolean> {
    return this.apply(id, revocation);
  }

  private apply(id: string, revocation: StoredRevocation): boolean {
    const session = this.byId.get(id);
    if (!session || session.revokedAt !== null) return false;
    session.revokedAt = revocation.revokedAt;
    session.revokedByUserId = revocation.byUserId;
    session.revokedByKeyId = revocation.byKeyId;
    return true;
  }
}

type StoredRevocation = Parameters<Ports.SessionRepository['revoke']>[1];

function coveredBy(session: StoredSession, scope: Ports.CoveredScope): boolean {
  if (scope.kind === 'stage') return true;
  if (scope.kind === 'allOfUser') return session.userId === scope.userId;
  if (scope.kind === 'key') return session.createdByKeyId === scope.keyId;
  if (scope.kind === 'orgCreator')
    return session.orgId === scope.orgId && session.createdByUserId === scope.creatorUserId;
  return inScope(session, scope);
}

/** A session's state as a scope index projecting it holds it. */
function stateOf(session: StoredSession): Ports.IndexedState {
  const { orgId, userId, boardId, createdByUserId, expiresAt, revokedAt } = session;
  return { orgId, userId, boardId, createdByUserId, expiresAt, revokedAt };
}

/** The partition of a session among `count`: fixed by its id, and spread across ids. */
function partitionOf(id: string, count: number): number {
  let hash = 0;
  for (const char of id) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % count;
}

function inScope(session: StoredSession, scope: Ports.SessionScope): boolean {
  switch (scope.kind) {
    case 'orgUser':
      return (
        session.orgId === scope.orgId &&
        session.userId === scope.userId &&
        (scope.boardId === undefined || session.boardId === scope.boardId)
      );
    case 'creatorUser':
      return (
        session.createdByUserId === scope.creatorUserId &&
        session.userId === scope.userId &&
        (scope.boardId === undefined || session.boardId === scope.boardId)
      );
    case 'board':
      return session.boardId === scope.boardId;
    case 'creatorBoard':
      return session.createdByUserId === scope.creatorUserId && session.boardId === scope.boardId;
  }
}

/** In-memory API keys keyed by hash, recording every lookup. */
export class FakeApiKeys extends RecordedLookups<ApiKeyRecord> implements Ports.ApiKeyRepository {
  constructor(records: ApiKeyRecord[] = []) {
    super(records, (record) => record.keyHash);
  }

  async create(record: ApiKeyRecord): Promise<void> {
    this.records.set(record.keyHash, record);
  }

  async getByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.lookup(keyHash);
  }

  async revoke(keyId: string, revokedAt: string, revokedBy?: string): Promise<ApiKeyRecord | undefined> {
    const found = [...this.records.values()].find((k) => k.keyId === keyId);
    if (!found || found.status === 'REVOKED') return found;
    const revoked: ApiKeyRecord = {
      ...found,
      status: 'REVOKED',
      revokedAt,
      ...(revokedBy !== undefined ? { revokedBy } : {}),
    };
    this.records.set(found.keyHash, revoked);
    return revoked;
  }

  /** Every last-use write, as asked (the conditional ones that changed nothing too). */
  readonly uses: Array<{ keyHash: string; at: string }> = [];

  async recordUse(keyHash: string, at: string, staleBefore: string): Promise<void> {
    this.uses.push({ keyHash, at });
    const found = this.records.get(keyHash);
    if (found && (found.lastUsedAt === undefined || found.lastUsedAt < staleBefore))
      this.records.set(keyHash, { ...found, lastUsedAt: at });
  }

  async recordUsagePlan(keyHash: string, at: string): Promise<void> {
    const found = this.records.get(keyHash);
    if (found && found.usagePlanAt === undefined) this.records.set(keyHash, { ...found, usagePlanAt: at });
  }

  async list(userId?: string): Promise<ApiKeyRecord[]> {
    return [...this.records.values()].filter((k) => userId === undefined || k.userId === userId);
  }

  async setLimits(keyId: string, limits: RateLimit | null): Promise<ApiKeyRecord | undefined> {
    const found = [...this.records.values()].find((k) => k.keyId === keyId);
    if (found?.status !== 'ACTIVE') return found;
    const updated: ApiKeyRecord = { ...found, limits };
    this.records.set(found.keyHash, updated);
    return updated;
  }
}

/** Throttling that records what it was asked, in order, and fails when told to. */
export class FakeKeyThrottling implements Ports.KeyThrottling {
  readonly calls: string[] = [];
  failure: Error | undefined;

  async register(keyId: string): Promise<void> {
    this.record(`register ${keyId}`);
  }

  async apply(keyId: string, limits: RateLimit | null): Promise<void> {
    this.record(`apply ${keyId} ${limits ? `${limits.rate}/${limits.burst}` : 'defaults'}`);
  }

  async remove(keyId: string): Promise<void> {
    this.record(`remove ${keyId}`);
  }

  private record(call: string): void {
    if (this.failure) throw this.failure;
    this.calls.push(call);
  }
}

/**
 * The per-host delivery bound in memory, as the DynamoDB counters keep it: a fixed one-second window per
 * host and one per (host, owner), read from `clock`, shared out by the service's own
 * `fairShareWaitSeconds`. Remembers every host it was asked about, in order (`asked`), and each window's
 * count (`counts`, keyed `host second` and `host owner second`).
 */
export class FakeDestinationRateLimit implements Ports.DestinationRateLimit {
  readonly asked: string[] = [];
  readonly counts = new Map<string, number>();

  constructor(
    private readonly clock: Ports.Clock,
    private readonly perSecond: number,
    private readonly perOwnerPerSecond = Math.min(
      perSecond,
      WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
    ),
  ) {}

  async admit(host: string, ownerUserId: string): Promise<number> {
    this.asked.push(host);
    const second = Math.floor(this.clock.now().getTime() / 1000);
    const count = async (key: string) => {
      const next = (this.counts.get(key) ?? 0) + 1;
      this.counts.set(key, next);
      return next;
    };
    return fairShareWaitSeconds(
      { owner: () => count(`${host} ${ownerUserId} ${second}`), host: () => count(`${host} ${second}`) },
      { perHost: this.perSecond, perOwner: this.perOwnerPerSecond },
    );
  }
}

/** A clock frozen at `iso`, counting how often it is read. */
export function fixedClock(iso: string): Ports.Clock & { reads: number } {
  const clock = {
    reads: 0,
    now: () => {
      clock.reads += 1;
      return new Date(iso);
    },
  };
  return clock;
}

/** A monotonic millisecond clock that stands still until `advance` moves it. */
export function manualMonotonicClock(): (() => number) & { advance(ms: number): void } {
  let now = 0;
  return Object.assign(() => now, {
    advance: (ms: number) => {
      now += ms;
    },
  });
}

/** A clock that moves `stepMs` forward on every reading, to expose code that reads it more than once. */
export function tickingClock(iso: string, stepMs: number): Ports.Clock & { reads: number } {
  const start = Date.parse(iso);
  const clock = {
    reads: 0,
    now: () => new Date(start + stepMs * clock.reads++),
  };
  return clock;
}

/**
 * A deterministic random source: call n of `bytes(size)` returns `size` bytes all equal to n (1, 2, ...)
 * unless a fixed pattern is given; `uuid()` returns uuid-like ids from a counter. Requested sizes are kept.
 */
export function sequenceRandom(pattern?: readonly number[]): Ports.RandomSource & {
  sizes: number[];
  uuids: string[];
} {
  let byteCalls = 0;
  const random = {
    sizes: [] as number[],
    uuids: [] as string[],
    bytes: (size: number) => {
      byteCalls += 1;
      random.sizes.push(size);
      const buffer = Buffer.alloc(size, byteCalls);
      if (pattern) for (let i = 0; i < size; i++) buffer[i] = pattern[i % pattern.length] ?? 0;
      return buffer;
    },
    uuid: () => {
      const id = `00000000-0000-4000-8000-${String(random.uuids.length + 1).padStart(12, '0')}`;
      random.uuids.push(id);
      return id;
    },
  };
  return random;
}

export const PUBLIC_BOARD: Board = {
  boardId: 'board-public',
  orgId: 'org-a',
  visibility: 'PUBLIC',
  name: 'P',
};
export const PRIVATE_BOARD: Board = {
  boardId: 'board-private',
  orgId: 'org-a',
  visibility: 'PRIVATE',
  name: 'Private',
};

/** An ACTIVE API key record for `keyHash`. */
export function apiKeyRecord(keyHash: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    keyHash,
    keyId: 'key_0123456789abcdef01234567',
    userId: 'owner-1',
    name: null,
    status: 'ACTIVE',
    createdAt: '2025-01-01T00:00:00.000Z',
    revokedAt: null,
    limits: null,
    ...overrides,
  };
}

/**
 * Pairwise subjects that show what they were derived from: `sub(<kind>:<tenant id>,<user id>)` and
 * `tid(<kind>:<tenant id>)`, so a test sees which tenant a claim names.
 */
export const VISIBLE_SUBJECTS: Ports.PairwiseSubjects = {
  subjectOf: async (tenant, userId) => `sub(${tenant.kind}:${tenant.id},${userId})`,
  tenantIdOf: async (tenant) => `tid(${tenant.kind}:${tenant.id})`,
};
