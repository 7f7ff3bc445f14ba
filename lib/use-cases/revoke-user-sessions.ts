import type { KeyOwner } from '#lib/domain/api-key';
import {
  type CutoffEntry,
  type CutoffNotice,
  type CutoffRecord,
  type CutoffScope,
  type CutoffTarget,
  coveringCutoff,
  cutoffScopeKey,
  cutoffScopesOf,
} from '#lib/domain/cutoffs';
import { BoardAccessDeniedError, BoardNotFoundError } from '#lib/domain/errors';
import type { RevokedScope } from '#lib/domain/events';
import type {
  BoardRepository,
  Clock,
  CountCandidate,
  MembershipRepository,
  RandomSource,
  SessionRepository,
  SessionScope,
} from '#lib/domain/ports';
import { scopesFor } from './session-access';
import { TenantFilter } from './session-streams';

export interface RevokeUserSessionsDeps {
  sessions: SessionRepository;
  boards: BoardRepository;
  memberships: MembershipRepository;
  clock: Clock;
  /** Draws each call's cut-off id. */
  random: RandomSource;
}

/** An external user's sessions (on one board, when given), or a board's whole population (board alone). */
export type RevokeUserSessionsCommand =
  | { userId: string; boardId?: string }
  | { userId?: undefined; boardId: string };

export const BOARD_REVOKE_DENIED = "Only members of the board's organization may revoke all of its sessions";

/**
 * Revokes, with cut-offs, every session of the selection the caller may revoke that was created up to the
 * moment the call ends: an external user's sessions within the caller's tenant (on one board, when
 * given), or every session on a board of the caller's organization. The writes do not depend on the
 * sessions: one per scope (the caller's own sessions of the user, and one per organization of the
 * caller), twice. The first cut-off, written before anything is counted, covers every session created
 * before the call began even if the count then runs out of time; the second, written once the count is
 * done, covers those created while it ran. The answer counts the sessions of the selection that were
 * active when the call began, from the states the scope indexes project, every scope and every write
 * shard read at once (the indexes lag writes by a moment: a session created in that moment is covered
 * all the same, only perhaps not counted); where an earlier cut-off of the same records covers a scope up
 * to some instant, only the sessions created after it are read (`coveredThrough`). The last cut-off's entry on the first record also carries the
 * call's notice (the scope as named, the count): the one `sessions.revoked` event the call makes is
 * derived from it (docs/events.md).
 */
export async function revokeUserSessions(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  command: RevokeUserSessionsCommand,
): Promise<{ revoked: number }> {
  const { targets, countScopes } = await planCutoffs(deps, caller, command);
  const cutoff = (): CutoffEntry => ({
    id: deps.random.uuid(),
    at: deps.clock.now().toISOString(),
    byUserId: caller.userId,
    byKeyId: caller.keyId,
  });
  const first = cutoff();
  await deps.sessions.writeCutoff(targets, first);

  // What earlier cut-offs of the same selection cover already need not be read again: each scope is
  // counted only from the last of them on.
  const covered = await coveredThrough(deps, targets, countScopes, first.id);
  const candidates = await collect(
    deps,
    caller,
    countScopes,
    first.at,
    command.userId !== undefined,
    covered,
  );
  // This call's own cut-off is left out: the count is of what the call changed.
  const earlier = await deps.sessions.readCutoffs(uniqueScopes(candidates));
  const own = new Set([first.id]);

  // Taken only now, right before the write: every session created before the call returns, counted or
  // not, was created at or before it.
  const revoked = countActive(candidates, earlier, first.at, own);
  const last = cutoff();
  // The call tells of itself once (one `sessions.revoked`), from its last entry on its first record only.
  const notice: CutoffNotice = { scope: requestedScope(command), revoked, writtenAt: last.at };
  const [announcing, ...others] = targets;
  await Promise.all([
    announcing ? deps.sessions.writeCutoff([announcing], { ...last, notice }) : undefined,
    others.length > 0 ? deps.sessions.writeCutoff(others, last) : undefined,
  ]);
  return { revoked };
}

/** The selection as the caller named it, for the call's event. */
function requestedScope(command: RevokeUserSessionsCommand): RevokedScope {
  return {
    ...(command.userId !== undefined ? { userId: command.userId } : {}),
    ...(command.boardId !== undefined ? { boardId: command.boardId } : {}),
  };
}

/**
 * For each count scope, the latest instant up to which an earlier cut-off (not this call's, `own`) of the
 * record the call writes for that scope covers every session the count could take from it: an entry of
 * that record covers a session of its scope created at or before its `at` when it names no creators or
 * names every creator this call's entry names (the count takes only those creators' sessions). The
 * sessions at or before that instant are covered, so the count would leave them out anyway: reading
 * only those created after it keeps the count exact. Undefined for a scope no earlier entry covers so.
 * One consistent read of the records the call writes.
 */
async function coveredThrough(
  deps: RevokeUserSessionsDeps,
  targets: readonly CutoffTarget[],
  countScopes: readonly SessionScope[],
  own: string,
): Promise<Array<string | undefined>> {
  const records = await deps.sessions.readCutoffs(targets.map((target) => target.scope));
  const byKey = new Map(records.map((record) => [cutoffScopeKey(record.scope), record]));
  return countScopes.map((scope) => {
    const target = targets.find((candidate) => writesFor(candidate.scope, scope));
    const record = target && byKey.get(cutoffScopeKey(target.scope));
    if (!target || !record) return undefined;
    let through: string | undefined;
    for (const entry of record.entries) {
      if (entry.id === own || (through !== undefined && entry.at <= through)) continue;
      if (coversCreators(entry, target.creators)) through = entry.at;
    }
    return through;
  });
}

/** Whether the record of `written` is the one a call writes for the sessions of the count scope `scope`. */
function writesFor(written: CutoffScope, scope: SessionScope): boolean {
  switch (written.kind) {
    case 'board':
      return scope.by === 'board' && scope.boardId === written.boardId;
    case 'boardUser':
      return (
        (scope.by === 'orgUser' || scope.by === 'creatorUser') &&
        scope.boardId === written.boardId &&
        scope.userId === written.userId
      );
    case 'orgUser':
      return (
        scope.by === 'orgUser' &&
        scope.boardId === undefined &&
        scope.orgId === written.orgId &&
        scope.userId === written.userId
      );
    case 'creatorUser':
      return (
        scope.by === 'creatorUser' &&
        scope.boardId === undefined &&
        scope.creatorUserId === written.creatorUserId &&
        scope.userId === written.userId
      );
    default:
      return false;
  }
}

/** Whether an entry covers the sessions of every one of `creators` (all creators when undefined). */
function coversCreators(entry: CutoffEntry, creators: readonly string[] | undefined): boolean {
  if (entry.creators === undefined) return true;
  if (creators === undefined) return false;
  const named = new Set(entry.creators);
  return creators.every((creator) => named.has(creator));
}

/** What a call writes, and the index scopes holding the sessions it counts. */
async function planCutoffs(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  command: RevokeUserSessionsCommand,
): Promise<{ targets: CutoffTarget[]; countScopes: SessionScope[] }> {
  const { userId, boardId } = command;
  if (userId === undefined) {
    const board = await deps.boards.get(boardId);
    if (!board) throw new BoardNotFoundError(boardId);
    if (!(await deps.memberships.isMember(board.orgId, caller.userId))) {
      throw new BoardAccessDeniedError(BOARD_REVOKE_DENIED);
    }
    return { targets: [{ scope: { kind: 'board', boardId } }], countScopes: [{ by: 'board', boardId }] };
  }
  const countScopes = await scopesFor(deps, caller, command);
  if (boardId !== undefined) {
    // One board: its organization's members' sessions when the caller is one of them, else its own.
    const member = countScopes[0]?.by === 'orgUser' ? countScopes[0].orgId : undefined;
    const creators = member !== undefined ? await deps.memberships.membersOf(member) : [caller.userId];
    return { targets: [{ scope: { kind: 'boardUser', boardId, userId }, creators }], countScopes };
  }
  const orgs = countScopes.flatMap((scope) => (scope.by === 'orgUser' ? [scope.orgId] : []));
  const members = await Promise.all(orgs.map((orgId) => deps.memberships.membersOf(orgId)));
  return {
    targets: [
      { scope: { kind: 'creatorUser', creatorUserId: caller.userId, userId } },
      ...orgs.map(
        (orgId, i): CutoffTarget => ({ scope: { kind: 'orgUser', orgId, userId }, creators: members[i] }),
      ),
    ],
    countScopes,
  };
}

/**
 * The sessions the scopes hold that were active at `at`, each once, within the caller's tenant for a
 * selection by user. Every scope is read at once. A session the caller created on a board of one of its
 * organizations is in two scopes, the organization's and the caller's own: the caller's scope leaves it
 * out (at the index where it can, here always), so the scopes' sessions never overlap. A user's scope may
 * hold 100,000 sessions, so nothing here allocates per session beyond the list it returns: the tenant's
 * verdict is asked once per creator, not per session.
 */
async function collect(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  scopes: readonly SessionScope[],
  at: string,
  byUser: boolean,
  coveredThrough: ReadonlyArray<string | undefined>,
): Promise<CountCandidate[]> {
  const tenant = new TenantFilter(deps.memberships, caller);
  const orgs = scopes.flatMap((scope) => (scope.by === 'orgUser' ? [scope.orgId] : []));
  const found = await Promise.all(
    scopes.map(async (scope, i) => {
      const after = coveredThrough[i];
      // A cut-off at or after this one (another call's, a moment ago) covers every session it could count.
      if (after !== undefined && after >= at) return [];
      const since = after !== undefined ? { after } : {};
      if (scope.by === 'creatorUser' && orgs.length > 0) {
        const candidates = await deps.sessions.scopeCandidates(scope, at, { exceptOrgs: orgs, ...since });
        const counted = new Set(orgs);
        return candidates.filter((candidate) => !counted.has(candidate.orgId));
      }
      const candidates = await deps.sessions.scopeCandidates(scope, at, since);
      if (!byUser || scope.by !== 'orgUser') return candidates;
      const creators = [...new Set(candidates.map((candidate) => candidate.createdByUserId))];
      const admitted = await Promise.all(
        creators.map((createdByUserId) => tenant.ownTenant({ orgId: scope.orgId, createdByUserId })),
      );
      const within = new Set(creators.filter((_, i) => admitted[i]));
      return within.size === creators.length
        ? candidates
        : candidates.filter((candidate) => within.has(candidate.createdByUserId));
    }),
  );
  return found.length === 1 ? (found[0] ?? []) : found.flat();
}

/**
 * Every scope whose record could cover one of these sessions, once each. Sessions are grouped by the
 * attributes the scopes are keyed by first: a user's 100,000 sessions have a handful of distinct ones.
 */
export function uniqueScopes(states: readonly CountCandidate[]): CutoffScope[] {
  // Nested by attribute rather than keyed by their concatenation: no string built per session.
  const seen = new Map<string, Map<string, Map<string, Set<string>>>>();
  const subjects: CountCandidate[] = [];
  for (const state of states) {
    const byCreator = entryOf(seen, state.orgId, () => new Map<string, Map<string, Set<string>>>());
    const byBoard = entryOf(byCreator, state.createdByUserId, () => new Map<string, Set<string>>());
    const users = entryOf(byBoard, state.boardId, () => new Set<string>());
    if (users.has(state.userId)) continue;
    users.add(state.userId);
    subjects.push(state);
  }
  const scopes = new Map<string, CutoffScope>();
  for (const subject of subjects) {
    for (const scope of cutoffScopesOf(subject)) {
      const key = cutoffScopeKey(scope);
      if (!scopes.has(key)) scopes.set(key, scope);
    }
  }
  return [...scopes.values()];
}

function entryOf<V>(map: Map<string, V>, key: string, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/**
 * The candidates (active at `at` as their index holds them) that no earlier cut-off covers (the entries
 * `except` names are not earlier: they are this call's).
 */
export function countActive(
  candidates: readonly CountCandidate[],
  earlier: CutoffRecord[],
  at: string,
  except?: ReadonlySet<string>,
): number {
  let active = 0;
  for (const candidate of candidates) {
    if (candidate.createdAt > at) continue;
    if (coveringCutoff(candidate, earlier, except) !== undefined) continue;
    active += 1;
  }
  return active;
}
