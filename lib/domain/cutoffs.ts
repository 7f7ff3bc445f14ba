/**
 * Revocation cut-offs: "the sessions of this scope created at or before T are revoked", one record per
 * scope however many sessions it holds. A revoke-all writes a cut-off instead of touching each session;
 * the embed page, retrieve and list read the records that could cover a session with it, and a covered
 * session is revoked, with `revokedAt` = the earliest cut-off the records hold that covers it.
 *
 * A record stays small whatever the number of calls (`mergeCutoff`): it holds at most
 * CUTOFF_ENTRIES_MAX cut-offs, each a few ids and instants (no list of creators), and it knows the latest
 * expiry of the sessions it covers, so it can expire with them (`cutoffRecordExpiry`).
 */
import type { RevokedScope } from './events';
import type { Revocation, StoredSession } from './session';
import type { Tenant } from './tenant';

/**
 * What a cut-off applies to. Each kind is keyed by attributes every session carries from its creation on
 * (they never change), so the records that could cover a session follow from the session alone:
 * - `tenantUser`: an external user's sessions of one tenant (its organization's members' sessions on its
 *   boards): written by that organization's members only;
 * - `tenantBoardUser`: the same, on one board;
 * - `creatorUser`: an external user's sessions created by one key owner, on any board: written by that
 *   key owner only;
 * - `creatorBoardUser`: the same, on one board;
 * - `board`: every session on one board, whoever created it (written by the board's organization);
 * - `user`: every session of an external user id, across tenants (operators only);
 * - `stage`: every session (operators only);
 * - `key`: every session one API key created (operators: a revoked or leaked key's links): the key
 *   owner's own sessions, as `creatorUser`'s;
 * - `orgCreator`: the sessions of one organization's tenant that one key owner created (operators: a
 *   member removed from that organization); not those the key owner created on the organization's
 *   public boards as a tenant of its own.
 * No record is written by two tenants, and none names another tenant's members. Two kinds are only read:
 * `orgUser` and `boardUser`, written before records were per tenant, whose entries name the creators
 * they cover (`creators`); they are read until they expire (see docs/api.md, "Migration").
 */
export type CutoffScope =
  | { kind: 'tenantUser'; tenant: Tenant; userId: string }
  | { kind: 'tenantBoardUser'; tenant: Tenant; boardId: string; userId: string }
  | { kind: 'creatorUser'; creatorUserId: string; userId: string }
  | { kind: 'creatorBoardUser'; creatorUserId: string; boardId: string; userId: string }
  | { kind: 'board'; boardId: string }
  | { kind: 'user'; userId: string }
  | { kind: 'stage' }
  | { kind: 'key'; keyId: string }
  | { kind: 'orgCreator'; orgId: string; creatorUserId: string }
  | LegacyCutoffScope;

/** The kinds written before records were per tenant: read, never written. */
export type LegacyCutoffScope =
  | { kind: 'orgUser'; orgId: string; userId: string }
  | { kind: 'boardUser'; boardId: string; userId: string };

/**
 * Most cut-offs one record holds. Eight keep each call's own instant for the last eight calls of a scope;
 * an entry is about 0.2 KB (1 KB with ids of the maximum length), so a record stays within a few KB.
 */
export const CUTOFF_ENTRIES_MAX = 8;

/**
 * How long after a cut-off its record lives at least: the default session lifetime (30 days). A call
 * learns the expiry of the sessions its count reads; a session created in the moment its index could
 * not show yet (or while it counted) is covered all the same, and this is how long the record is kept
 * for such a session when the logouts' pass (which reads them afterwards and grows the record's expiry)
 * has not told a later one.
 */
export const CUTOFF_UNSEEN_LIFETIME_SECONDS = 30 * 24 * 60 * 60;

/** One cut-off written into a scope's record. */
export interface CutoffEntry {
  /**
   * Drawn once per revoke-all call, and the same for both of its writes: its last write replaces its
   * first in each record. Writing the same entry again (a retry) changes nothing.
   */
  id: string;
  /** The sessions created at or before this instant (ISO 8601 UTC) are revoked. */
  at: string;
  byUserId: string;
  byKeyId: string | null;
  /**
   * Set once the call has counted the sessions this entry covers (its last write): the latest expiry
   * (epoch seconds) of the sessions only it covers, as far as the call could know. Absent on a call's
   * first write (the count has not run, and may never finish) and on entries written before records
   * had expiries: while any entry lacks it, the record does not expire.
   */
  until?: number;
  /**
   * Only sessions these key owners created: entries of the legacy kinds only (`orgUser`, `boardUser`),
   * read as written; no entry written now names creators.
   */
  creators?: readonly string[];
  /**
   * What the call tells of itself, carried by exactly one entry per call (its last write, on one of its
   * records): the `sessions.revoked` event is derived from this entry alone, so a call is told once,
   * with its final count.
   */
  notice?: CutoffNotice;
}

/** A revoke-all call's account of itself: the selection it was asked for, its count, when it wrote. */
export interface CutoffNotice {
  scope: RevokedScope;
  revoked: number;
  /** When the call wrote this entry (its cut-off `at` for the API; an operator's may be in the past). */
  writtenAt: string;
}

/** A scope's record: the cut-offs it holds, in no particular order, and what it knows of their sessions. */
export interface CutoffRecord {
  scope: CutoffScope;
  entries: readonly CutoffEntry[];
  /**
   * The latest expiry (epoch seconds) known of the sessions any cut-off written to the record covers,
   * those dropped since included: it only grows.
   */
  coversUntil?: number;
}

/**
 * The attributes of a session that decide which records may cover it; all fixed at creation. The
 * creating key's id is optional: the scope indexes revoke-all counts through do not project it, so a
 * count candidate is checked against every record but its key's (see `cutoffScopesOf`).
 */
export type CutoffSubject = Pick<StoredSession, 'orgId' | 'userId' | 'boardId' | 'createdByUserId'> &
  Partial<Pick<StoredSession, 'createdByKeyId'>>;

/**
 * What decides whether a cut-off covers a session: its subject, its creation time and its tenant. A
 * session read whole has its own tenant; a session known only from an index entry (which holds no
 * tenant) has the one its reader takes it to have (see `tenantDecides`).
 */
export type CoverageSubject = CutoffSubject & Pick<StoredSession, 'createdAt' | 'tenant'>;

const orgTenant = (orgId: string): Tenant => ({ kind: 'organization', id: orgId });

/**
 * The scopes whose records could cover this session. The tenant records (and `orgCreator`'s) are those
 * of the board's organization: the only organization whose tenant the session can be. Scopes a session has no key for
 * (no organization or creator, on sessions stored before ownership was recorded) are left out.
 */
export function cutoffScopesOf(session: CutoffSubject): CutoffScope[] {
  const { orgId, userId, boardId, createdByUserId } = session;
  const scopes: CutoffScope[] = [];
  if (createdByUserId !== '') {
    scopes.push(
      { kind: 'creatorUser', creatorUserId: createdByUserId, userId },
      { kind: 'creatorBoardUser', creatorUserId: createdByUserId, boardId, userId },
    );
  }
  if (orgId !== '') {
    scopes.push(
      { kind: 'tenantUser', tenant: orgTenant(orgId), userId },
      { kind: 'tenantBoardUser', tenant: orgTenant(orgId), boardId, userId },
    );
  }
  scopes.push({ kind: 'board', boardId }, { kind: 'user', userId }, { kind: 'stage' });
  if (orgId !== '' && createdByUserId !== '')
    scopes.push({ kind: 'orgCreator', orgId, creatorUserId: createdByUserId });
  // The creating key's record only when the key id is known: the scope indexes revoke-all counts
  // through do not project it (see `CutoffSubject`).
  if (session.createdByKeyId) scopes.push({ kind: 'key', keyId: session.createdByKeyId });
  if (orgId !== '') scopes.push({ kind: 'orgUser', orgId, userId });
  scopes.push({ kind: 'boardUser', boardId, userId });
  return scopes;
}

/** A stable text key of a scope (the adapter hashes it into the record's key). */
export function cutoffScopeKey(scope: CutoffScope): string {
  switch (scope.kind) {
    case 'tenantUser':
      return JSON.stringify([scope.kind, scope.tenant.kind, scope.tenant.id, scope.userId]);
    case 'tenantBoardUser':
      return JSON.stringify([scope.kind, scope.tenant.kind, scope.tenant.id, scope.boardId, scope.userId]);
    case 'creatorUser':
      return JSON.stringify([scope.kind, scope.creatorUserId, scope.userId]);
    case 'creatorBoardUser':
      return JSON.stringify([scope.kind, scope.creatorUserId, scope.boardId, scope.userId]);
    case 'orgUser':
      return JSON.stringify([scope.kind, scope.orgId, scope.userId]);
    case 'boardUser':
      return JSON.stringify([scope.kind, scope.boardId, scope.userId]);
    case 'board':
      return JSON.stringify([scope.kind, scope.boardId]);
    case 'user':
      return JSON.stringify([scope.kind, scope.userId]);
    case 'stage':
      return JSON.stringify([scope.kind]);
    case 'key':
      return JSON.stringify([scope.kind, scope.keyId]);
    case 'orgCreator':
      return JSON.stringify([scope.kind, scope.orgId, scope.creatorUserId]);
  }
}

const sameTenant = (a: Tenant, b: Tenant) => a.kind === b.kind && a.id === b.id;

/** Whether the record's scope holds the session at all (its key could be shared only by a hash collision). */
function inScope(scope: CutoffScope, session: CoverageSubject): boolean {
  switch (scope.kind) {
    case 'tenantUser':
      return sameTenant(scope.tenant, session.tenant) && scope.userId === session.userId;
    case 'tenantBoardUser':
      return (
        sameTenant(scope.tenant, session.tenant) &&
        scope.boardId === session.boardId &&
        scope.userId === session.userId
      );
    case 'creatorUser':
      return (
        scope.creatorUserId === session.createdByUserId &&
        scope.userId === session.userId &&
        session.createdByUserId !== ''
      );
    case 'creatorBoardUser':
      return (
        scope.creatorUserId === session.createdByUserId &&
        scope.boardId === session.boardId &&
        scope.userId === session.userId &&
        session.createdByUserId !== ''
      );
    case 'orgUser':
      return scope.orgId === session.orgId && scope.userId === session.userId && session.orgId !== '';
    case 'boardUser':
      return scope.boardId === session.boardId && scope.userId === session.userId;
    case 'board':
      return scope.boardId === session.boardId;
    case 'user':
      return scope.userId === session.userId;
    case 'stage':
      return true;
    case 'key':
      return scope.keyId === session.createdByKeyId && scope.keyId !== '';
    case 'orgCreator':
      // The organization's tenant only: a member's sessions on the organization's public boards as a
      // tenant of its own (made while not a member) are not the organization's to end.
      return (
        sameTenant(orgTenant(scope.orgId), session.tenant) &&
        scope.orgId === session.orgId &&
        scope.creatorUserId === session.createdByUserId &&
        session.createdByUserId !== ''
      );
  }
}

/** Whether `entry` of a record of `scope` covers the session: in scope, created at or before it, by one of its creators. */
function covers(entry: CutoffEntry, scope: CutoffScope, session: CoverageSubject): boolean {
  return (
    entry.at >= session.createdAt &&
    inScope(scope, session) &&
    (entry.creators === undefined || entry.creators.includes(session.createdByUserId))
  );
}

/**
 * The earliest cut-off among `records` that covers the session (created at or before it, in its scope,
 * by one of its creators where the entry names them), skipping the entries `except` names; undefined
 * when none does.
 */
export function coveringCutoff(
  session: CoverageSubject,
  records: Iterable<CutoffRecord>,
  except?: ReadonlySet<string>,
): CutoffEntry | undefined {
  let earliest: CutoffEntry | undefined;
  for (const record of records) {
    for (const entry of record.entries) {
      if (except?.has(entry.id)) continue;
      if (earliest && entry.at >= earliest.at) continue;
      if (covers(entry, record.scope, session)) earliest = entry;
    }
  }
  return earliest;
}

/**
 * Whether the session's tenant can change what `records` say of it: a tenant record (or an `orgCreator`
 * record) holds a cut-off at or after its creation. A reader that knows a session only from an index entry (no tenant) asks whose it
 * is only then.
 */
export function tenantDecides(
  session: CutoffSubject & Pick<StoredSession, 'createdAt'>,
  records: Iterable<CutoffRecord>,
): boolean {
  for (const { scope, entries } of records) {
    if (scope.kind === 'orgCreator') {
      const mine = scope.orgId === session.orgId && scope.creatorUserId === session.createdByUserId;
      if (mine && entries.some((entry) => entry.at >= session.createdAt)) return true;
      continue;
    }
    if (scope.kind !== 'tenantUser' && scope.kind !== 'tenantBoardUser') continue;
    if (scope.userId !== session.userId) continue;
    if (scope.kind === 'tenantBoardUser' && scope.boardId !== session.boardId) continue;
    if (entries.some((entry) => entry.at >= session.createdAt)) return true;
  }
  return false;
}

/**
 * The session as the cut-offs leave it: revoked at the earliest of its own revocation and the earliest
 * cut-off covering it (recorded as whoever wrote that one). Unchanged when none covers it or its own
 * revocation came first.
 */
export function withCutoffs<T extends StoredSession>(
  session: T,
  records: Iterable<CutoffRecord>,
  except?: ReadonlySet<string>,
): T {
  const cutoff = coveringCutoff(session, records, except);
  if (!cutoff || (session.revokedAt !== null && session.revokedAt <= cutoff.at)) return session;
  const revocation: Revocation = { revokedAt: cutoff.at, byUserId: cutoff.byUserId, byKeyId: cutoff.byKeyId };
  return {
    ...session,
    revokedAt: revocation.revokedAt,
    revokedByUserId: revocation.byUserId,
    revokedByKeyId: revocation.byKeyId,
  };
}

/** The scope a record's stored key names (`cutoffScopeKey`'s text); undefined for anything else. */
export function parseCutoffScopeKey(key: string): CutoffScope | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(key);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || !parts.every((part) => typeof part === 'string')) return undefined;
  const scope = scopeOfParts(parts as string[]);
  // Only the one spelling `cutoffScopeKey` writes names a scope.
  return scope !== undefined && cutoffScopeKey(scope) === key ? scope : undefined;
}

function scopeOfParts(parts: readonly string[]): CutoffScope | undefined {
  const [kind, a = '', b = '', c = '', d = ''] = parts;
  const tenantOf = (tenantKind: string, id: string): Tenant | undefined =>
    tenantKind === 'organization' || tenantKind === 'keyOwner' ? { kind: tenantKind, id } : undefined;
  switch (`${kind}/${parts.length}`) {
    case 'tenantUser/4': {
      const tenant = tenantOf(a, b);
      return tenant && { kind: 'tenantUser', tenant, userId: c };
    }
    case 'tenantBoardUser/5': {
      const tenant = tenantOf(a, b);
      return tenant && { kind: 'tenantBoardUser', tenant, boardId: c, userId: d };
    }
    case 'creatorUser/3':
      return { kind: 'creatorUser', creatorUserId: a, userId: b };
    case 'creatorBoardUser/4':
      return { kind: 'creatorBoardUser', creatorUserId: a, boardId: b, userId: c };
    case 'orgUser/3':
      return { kind: 'orgUser', orgId: a, userId: b };
    case 'boardUser/3':
      return { kind: 'boardUser', boardId: a, userId: b };
    case 'board/2':
      return { kind: 'board', boardId: a };
    case 'user/2':
      return { kind: 'user', userId: a };
    case 'stage/1':
      return { kind: 'stage' };
    case 'key/2':
      return { kind: 'key', keyId: a };
    case 'orgCreator/3':
      return { kind: 'orgCreator', orgId: a, creatorUserId: b };
    default:
      return undefined;
  }
}

/**
 * Where one cut-off entry stands among all of them, for the question "which cut-off ended this session":
 * by its instant, then its id, then its record's key. A total order, so exactly one (entry, record) pair
 * ends each session a cut-off covers, even when one call wrote the same entry into several records.
 */
function cutoffRank(entry: CutoffEntry, scope: CutoffScope): [string, string, string] {
  return [entry.at, entry.id, cutoffScopeKey(scope)];
}

function rankBefore(a: readonly string[], b: readonly string[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if ((a[i] as string) !== (b[i] as string)) return (a[i] as string) < (b[i] as string);
  }
  return false;
}

/**
 * The first cut-off covering the session, in `cutoffRank`'s order, as an entry and the scope of its
 * record; undefined when none covers it. One revoke-all writes the same entry into several records, and
 * two calls can cover one session: this names exactly one of them.
 */
export function firstCoveringCutoff(
  session: CoverageSubject,
  records: Iterable<CutoffRecord>,
): { entry: CutoffEntry; scope: CutoffScope } | undefined {
  let first: { entry: CutoffEntry; scope: CutoffScope; rank: [string, string, string] } | undefined;
  for (const record of records) {
    for (const entry of record.entries) {
      if (!covers(entry, record.scope, session)) continue;
      const rank = cutoffRank(entry, record.scope);
      if (!first || rankBefore(rank, first.rank)) first = { entry, scope: record.scope, rank };
    }
  }
  return first && { entry: first.entry, scope: first.scope };
}

/**
 * The instant after which the sessions a record's entry could have ended were created: the latest entry
 * of the same record that comes before it (`cutoffRank`) and covers every session it covers (no creators
 * named, or all of its creators among them). A session created at or before that instant was covered by
 * that earlier entry, so this one did not end it. Undefined when no such entry exists: from the start.
 */
export function coveredSince(record: CutoffRecord, entry: CutoffEntry): string | undefined {
  const rank = cutoffRank(entry, record.scope);
  let since: string | undefined;
  for (const other of record.entries) {
    if (other.id === entry.id || !rankBefore(cutoffRank(other, record.scope), rank)) continue;
    const widerOrSame =
      other.creators === undefined ||
      entry.creators?.every((creator) => other.creators?.includes(creator)) === true;
    if (widerOrSame && (since === undefined || other.at > since)) since = other.at;
  }
  return since;
}

/**
 * The instant up to which the record's counted cut-offs cover every session of its scope (the latest
 * `at` of an entry with `until`, naming no creators), leaving out the entries `except` names; undefined
 * when none. A count of the scope need not read what that instant covers, and learns nothing new there.
 */
export function countedThrough(record: CutoffRecord, except?: ReadonlySet<string>): string | undefined {
  let through: string | undefined;
  for (const entry of record.entries) {
    if (except?.has(entry.id) || entry.until === undefined || entry.creators !== undefined) continue;
    if (through === undefined || entry.at > through) through = entry.at;
  }
  return through;
}

/**
 * When a record may expire (epoch seconds, the table's TTL): the latest expiry of the sessions it
 * covers, once every cut-off it holds has been counted; undefined (never) while one has not.
 */
export function cutoffRecordExpiry(
  record: Pick<CutoffRecord, 'entries' | 'coversUntil'>,
): number | undefined {
  if (record.coversUntil === undefined) return undefined;
  return record.entries.every((entry) => entry.until !== undefined) ? record.coversUntil : undefined;
}

/**
 * The back-channel logouts one change of a record starts (lib/use-cases/logout-fan-out.ts): those of the sessions
 * an entry ended, created after `since` (when given) and at or before `at`. An entry that appeared starts
 * one for what it covers; an entry moved later (a call's last write replacing its first) starts one for
 * what the move added. Both instants travel with the job, so a job runs alike when its entry was merged
 * into a later one meanwhile.
 */
export interface CutoffFanOutStart {
  scope: CutoffScope;
  entryId: string;
  at: string;
  since?: string;
}

/** One write of a cut-off into a record. */
export interface CutoffWrite {
  /** The entry; a call's last write carries the same id as its first, with `until` (and its notice). */
  entry: CutoffEntry;
  /**
   * On a counted write: the instant up to which the call's count read the scope's sessions. Uncounted
   * cut-offs at or before it (another call's first write that never finished, entries from before
   * records had expiries) are counted with it: their sessions' expiry is known now.
   */
  countedThrough?: string;
  /** The writer's clock (ISO 8601): a cut-off whose sessions have all expired by then may be dropped. */
  now: string;
}

/** A record after a write: what it holds, and what changed. */
export interface MergedCutoff {
  entries: CutoffEntry[];
  coversUntil?: number;
  /** The entries written or changed by the write. */
  written: CutoffEntry[];
  /** The ids of the entries the write dropped. */
  dropped: string[];
}

/**
 * The record once `write` is merged into it. Nothing a record covers ever stops being covered: a cut-off
 * is dropped only when a later one the record keeps covers every session it did (same scope, no creators
 * named: a later cut-off covers more). What is dropped:
 * - the call's own first cut-off, replaced by its last (the same id);
 * - a counted cut-off whose sessions had all expired by `now` (`until`);
 * - while the record holds more than `max`: the oldest cut-off of the writer's own key owner (a later
 *   cut-off of the same writer and scope supersedes an earlier one), else the oldest of all.
 * The written entry itself is never dropped, and a cut-off is dropped only while a later one other than
 * it remains, so undoing the write (removing the entry) never uncovers a session either. A counted write
 * also counts the uncounted cut-offs at or before what its count read (`countedThrough`: another call's
 * first write that never finished, entries written before records had expiries), whose sessions it has
 * read. Dropping a
 * cut-off whose sessions' expiry is not known makes the next one unknown too (its `until` is cleared), so
 * the record cannot expire before a count has read them. A session a dropped cut-off covered shows the
 * next cut-off covering it: a later `revokedAt` (and its writer), never another status.
 */
export function mergeCutoff(
  record: Pick<CutoffRecord, 'entries' | 'coversUntil'> | undefined,
  write: CutoffWrite,
  max: number = CUTOFF_ENTRIES_MAX,
): MergedCutoff {
  const before = new Map((record?.entries ?? []).map((entry) => [entry.id, entry]));
  const own = before.get(write.entry.id);
  // A retry of a first write arriving after the last one changes nothing: the later instant stays; the
  // same write again (its answer lost) finds itself.
  const kept =
    own && (own.at > write.entry.at || (own.at === write.entry.at && own.until === write.entry.until));
  const added = own && kept ? own : write.entry;
  const entries = new Map(before);
  entries.set(added.id, added);
  const changed = new Set<string>(own === added ? [] : [added.id]);
  const dropped: string[] = [];
  const drop = (entry: CutoffEntry) => {
    entries.delete(entry.id);
    dropped.push(entry.id);
    // What only it covered is now the next cut-off's: so is the latest expiry of those sessions, and,
    // when that was not known, the next one's is not all known either.
    const next = earliestAfter(entries.values(), entry);
    if (!next || next.until === undefined) return;
    const { until: _known, ...unknown } = next;
    const merged: CutoffEntry =
      entry.until === undefined ? unknown : { ...next, until: Math.max(next.until, entry.until) };
    if (merged.until === next.until) return;
    entries.set(next.id, merged);
    changed.add(next.id);
  };
  const ordered = () => [...entries.values()].sort((a, b) => (rankBefore(rankOf(a), rankOf(b)) ? -1 : 1));
  // Whether a cut-off later than `entry`, other than the written one, remains to cover what it covers.
  const coveredLater = (entry: CutoffEntry) =>
    [...entries.values()].some(
      (other) => other.id !== entry.id && other.id !== added.id && !rankBefore(rankOf(other), rankOf(entry)),
    );

  if (write.countedThrough !== undefined && added.until !== undefined) {
    // What an uncounted cut-off at or before the count's instant covers, the count has read (it reads
    // from the latest counted cut-off on): its sessions live no longer than the written one's.
    for (const entry of ordered()) {
      if (entry.id !== added.id && entry.until === undefined && entry.at <= write.countedThrough) {
        entries.set(entry.id, { ...entry, until: added.until });
        changed.add(entry.id);
      }
    }
  }
  const now = Date.parse(write.now) / 1000;
  for (const entry of ordered()) {
    if (entry.id === added.id || entry.until === undefined || entry.until > now) continue;
    if (coveredLater(entry)) drop(entry);
  }
  if (entries.size > max) {
    // Every cut-off but the written one and the latest other may go: that latest covers what they did.
    // The writer's own oldest first, then the oldest of all; worked out once (a record written before
    // records were bounded may hold thousands).
    const candidates = ordered()
      .filter((entry) => entry.id !== added.id)
      .slice(0, -1);
    const victims = [
      ...candidates.filter((entry) => entry.byUserId === added.byUserId),
      ...candidates.filter((entry) => entry.byUserId !== added.byUserId),
    ].slice(0, entries.size - max);
    for (const victim of victims) drop(victim);
  }

  const coversUntil = maxOf(record?.coversUntil, added.until);
  const final = ordered();
  return {
    entries: final,
    ...(coversUntil !== undefined ? { coversUntil } : {}),
    written: final.filter((entry) => changed.has(entry.id)),
    dropped: dropped.filter((id) => before.has(id)),
  };
}

const rankOf = (entry: CutoffEntry): [string, string] => [entry.at, entry.id];

function earliestAfter(entries: Iterable<CutoffEntry>, entry: CutoffEntry): CutoffEntry | undefined {
  let next: CutoffEntry | undefined;
  for (const other of entries) {
    if (!rankBefore(rankOf(entry), rankOf(other))) continue;
    if (!next || rankBefore(rankOf(other), rankOf(next))) next = other;
  }
  return next;
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/** Epoch seconds of an ISO instant, rounded up (a TTL never falls before the instant). */
export function epochSecondsOf(iso: string): number {
  return Math.ceil(Date.parse(iso) / 1000);
}
