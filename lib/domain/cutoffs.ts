/**
 * Revocation cut-offs: "the sessions of this scope created at or before T are revoked", one record per
 * scope however many sessions it holds. A revoke-all writes a cut-off instead of touching each session;
 * the embed page, retrieve and list read the records that could cover a session with it, and a covered
 * session is revoked, with `revokedAt` = the earliest cut-off covering it.
 */
import type { RevokedScope } from './events';
import type { Revocation, StoredSession } from './session';

/**
 * What a cut-off applies to. Each kind is keyed by attributes every session carries from its creation on
 * (they never change), so the records that could cover a session follow from the session alone:
 * - `orgUser`: an external user's sessions on one organization's boards, created by `creators` (the
 *   organization's members when the cut-off was written: the tenant's own, never another tenant's);
 * - `creatorUser`: an external user's sessions created by one key owner, on any board;
 * - `boardUser`: an external user's sessions on one board, created by `creators`;
 * - `board`: every session on one board, whoever created it;
 * - `user`: every session of an external user id, across tenants (operators only);
 * - `stage`: every session (operators only);
 * - `key`: every session one API key created (operators: a revoked or leaked key's links);
 * - `orgCreator`: every session one key owner created on one organization's boards (operators: a member
 *   removed from that organization).
 */
export type CutoffScope =
  | { kind: 'orgUser'; orgId: string; userId: string }
  | { kind: 'creatorUser'; creatorUserId: string; userId: string }
  | { kind: 'boardUser'; boardId: string; userId: string }
  | { kind: 'board'; boardId: string }
  | { kind: 'user'; userId: string }
  | { kind: 'stage' }
  | { kind: 'key'; keyId: string }
  | { kind: 'orgCreator'; orgId: string; creatorUserId: string };

/** One cut-off written into a scope's record. */
export interface CutoffEntry {
  /** Drawn once per revoke-all call: writing the same entry again (a retry) changes nothing. */
  id: string;
  /** The sessions created at or before this instant (ISO 8601 UTC) are revoked. */
  at: string;
  byUserId: string;
  byKeyId: string | null;
  /** Only sessions these key owners created (the kinds that carry it); every session otherwise. */
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

/** A cut-off to write: the scope, and the key owners whose sessions it covers where it names them. */
export interface CutoffTarget {
  scope: CutoffScope;
  creators?: readonly string[];
}

/** A scope's record: every cut-off written to it, in no particular order. */
export interface CutoffRecord {
  scope: CutoffScope;
  entries: readonly CutoffEntry[];
}

/**
 * The attributes of a session that decide which records may cover it; all fixed at creation. The
 * creating key's id is optional: the scope indexes revoke-all counts through do not project it, so a
 * count candidate is checked against every record but its key's (see `cutoffScopesOf`).
 */
export type CutoffSubject = Pick<StoredSession, 'orgId' | 'userId' | 'boardId' | 'createdByUserId'> &
  Partial<Pick<StoredSession, 'createdByKeyId'>>;

/**
 * The scopes whose records could cover this session: the same seven, and the eighth, its creating key's,
 * whenever the key id is known (always for a session read whole).
 */
export function cutoffScopesOf(session: CutoffSubject): CutoffScope[] {
  const scopes: CutoffScope[] = [
    { kind: 'orgUser', orgId: session.orgId, userId: session.userId },
    { kind: 'creatorUser', creatorUserId: session.createdByUserId, userId: session.userId },
    { kind: 'boardUser', boardId: session.boardId, userId: session.userId },
    { kind: 'board', boardId: session.boardId },
    { kind: 'user', userId: session.userId },
    { kind: 'stage' },
    { kind: 'orgCreator', orgId: session.orgId, creatorUserId: session.createdByUserId },
  ];
  if (session.createdByKeyId) scopes.push({ kind: 'key', keyId: session.createdByKeyId });
  return scopes;
}

/** A stable text key of a scope (the adapter hashes it into the record's key). */
export function cutoffScopeKey(scope: CutoffScope): string {
  switch (scope.kind) {
    case 'orgUser':
      return JSON.stringify([scope.kind, scope.orgId, scope.userId]);
    case 'creatorUser':
      return JSON.stringify([scope.kind, scope.creatorUserId, scope.userId]);
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

/** Whether the record's scope holds the session at all (its key could be shared only by a hash collision). */
function inScope(scope: CutoffScope, session: CutoffSubject): boolean {
  switch (scope.kind) {
    case 'orgUser':
      return scope.orgId === session.orgId && scope.userId === session.userId && session.orgId !== '';
    case 'creatorUser':
      return (
        scope.creatorUserId === session.createdByUserId &&
        scope.userId === session.userId &&
        session.createdByUserId !== ''
      );
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
      return (
        scope.orgId === session.orgId &&
        scope.creatorUserId === session.createdByUserId &&
        session.orgId !== '' &&
        session.createdByUserId !== ''
      );
  }
}

/**
 * The earliest cut-off among `records` that covers the session (created at or before it, in its scope,
 * by one of its creators where the entry names them), skipping the entries `except` names; undefined
 * when none does.
 */
export function coveringCutoff(
  session: CutoffSubject & Pick<StoredSession, 'createdAt'>,
  records: Iterable<CutoffRecord>,
  except?: ReadonlySet<string>,
): CutoffEntry | undefined {
  let earliest: CutoffEntry | undefined;
  for (const record of records) {
    if (!inScope(record.scope, session)) continue;
    for (const entry of record.entries) {
      if (except?.has(entry.id)) continue;
      if (entry.at < session.createdAt) continue;
      if (entry.creators !== undefined && !entry.creators.includes(session.createdByUserId)) continue;
      if (!earliest || entry.at < earliest.at) earliest = entry;
    }
  }
  return earliest;
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
  const [kind, a, b] = parts as string[];
  const scope: CutoffScope | undefined =
    kind === 'orgUser' && parts.length === 3
      ? { kind, orgId: a as string, userId: b as string }
      : kind === 'creatorUser' && parts.length === 3
        ? { kind, creatorUserId: a as string, userId: b as string }
        : kind === 'boardUser' && parts.length === 3
          ? { kind, boardId: a as string, userId: b as string }
          : kind === 'board' && parts.length === 2
            ? { kind, boardId: a as string }
            : kind === 'user' && parts.length === 2
              ? { kind, userId: a as string }
              : kind === 'stage' && parts.length === 1
                ? { kind }
                : undefined;
  // Only the one spelling `cutoffScopeKey` writes names a scope.
  return scope !== undefined && cutoffScopeKey(scope) === key ? scope : undefined;
}

/**
 * Where one cut-off entry stands among all of them, for the question "which cut-off ended this session":
 * by its instant, then its id, then its record's key. A total order, so exactly one (entry, record) pair
 * ends each session a cut-off covers, even when one call wrote the same entry into several records.
 */
function cutoffRank(entry: CutoffEntry, scope: CutoffScope): [string, string, string] {
  return [entry.at, entry.id, cutoffScopeKey(scope)];
}

function rankBefore(a: [string, string, string], b: [string, string, string]): boolean {
  for (let i = 0; i < 3; i++) {
    if ((a[i] as string) !== (b[i] as string)) return (a[i] as string) < (b[i] as string);
  }
  return false;
}

/** Whether `entry` of a record of `scope` covers the session: in scope, created at or before it, by one of its creators. */
function covers(
  entry: CutoffEntry,
  scope: CutoffScope,
  session: CutoffSubject & Pick<StoredSession, 'createdAt'>,
) {
  return (
    inScope(scope, session) &&
    entry.at >= session.createdAt &&
    (entry.creators === undefined || entry.creators.includes(session.createdByUserId))
  );
}

/**
 * The first cut-off covering the session, in `cutoffRank`'s order, as an entry and the scope of its
 * record; undefined when none covers it. One revoke-all writes the same entry into several records, and
 * two calls can cover one session: this names exactly one of them.
 */
export function firstCoveringCutoff(
  session: CutoffSubject & Pick<StoredSession, 'createdAt'>,
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
