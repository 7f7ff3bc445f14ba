import type { KeyOwner } from '#lib/domain/api-key';
import {
  CUTOFF_UNSEEN_LIFETIME_SECONDS,
  type CutoffEntry,
  type CutoffNotice,
  type CutoffRecord,
  type CutoffScope,
  countedThrough,
  coveringCutoff,
  cutoffScopeKey,
  cutoffScopesOf,
  epochSecondsOf,
  tenantDecides,
} from '#lib/domain/cutoffs';
import {
  BoardAccessDeniedError,
  BoardNotFoundError,
  DependencyUnavailableError,
  RevocationNotRecordedError,
  RevocationPartlyRecordedError,
  RevocationUnfinishedError,
} from '#lib/domain/errors';
import type { RevokedScope } from '#lib/domain/events';
import type {
  BoardRepository,
  Clock,
  CountCandidate,
  CutoffRecordStore,
  MembershipRepository,
  RandomSource,
  SessionRepository,
  SessionScope,
} from '#lib/domain/ports';
import { legacyTenant, type Tenant } from '#lib/domain/tenant';
import { scopesFor } from './session-access';
import { TenantGuess } from './session-streams';

export interface RevokeUserSessionsDeps {
  sessions: SessionRepository;
  /** Where the cut-off records are written. */
  cutoffs: CutoffRecordStore;
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
 * moment the call ends: an external user's sessions in the caller's tenants (on one board, when given),
 * or every session on a board of the caller's organization. The writes do not depend on the sessions:
 * one record per scope (the caller's own sessions of the user, and its organizations' tenants'), each
 * written twice with the call's one entry. The first write, before anything is counted, covers every
 * session created before the call began, in all of its records or in none (`writeFirst`); the last,
 * once the count is done, moves the entry to the call's end (covering those created while it ran),
 * with the latest expiry of what it covers (so the record can expire) and, on the first record, the
 * call's notice (the scope as named, the count): the one `sessions.revoked` event the call makes is
 * derived from it (docs/events.md). The answer counts the sessions of the selection that were active
 * when the call began, from the states the scope indexes project, every scope and every write shard read
 * at once (the indexes lag writes by a moment: a session created in that moment is covered all the same,
 * only perhaps not counted); where an earlier counted cut-off of the same records covers a scope up to
 * some instant, only the sessions created after it are read. A call that cannot finish says what it
 * revoked: nothing (`RevocationNotRecordedError`), or the sessions up to its first cut-off
 * (`RevocationUnfinishedError`).
 */
export async function revokeUserSessions(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  command: RevokeUserSessionsCommand,
): Promise<{ revoked: number }> {
  const { targets, counts } = await planCutoffs(deps, caller, command);
  const id = deps.random.uuid();
  const cutoff = (at: string): CutoffEntry => ({ id, at, byUserId: caller.userId, byKeyId: caller.keyId });
  const first = cutoff(deps.clock.now().toISOString());
  await writeFirst(deps, targets, first);

  const guess = new TenantGuess(deps.memberships);
  try {
    // What earlier counted cut-offs of the same selection cover need not be read again: each scope is
    // counted only from the last of them on.
    const covered = coveredThrough(await deps.sessions.readCutoffs(targets), counts, id);
    const candidates = await collect(
      deps,
      caller,
      counts.map(({ scope }) => scope),
      first.at,
      command.userId !== undefined,
      covered,
      guess,
    );
    // This call's own cut-off is left out: the count is of what the call changed.
    const earlier = await deps.sessions.readCutoffs(uniqueScopes(candidates));
    const revoked = await countActive(candidates, earlier, first.at, new Set([id]), guess);

    // Taken only now, right before the write: every session created before the call returns, counted or
    // not, was created at or before it.
    const at = deps.clock.now().toISOString();
    // The records live as long as the sessions they cover: those the count read, and, for one created in
    // the moment the index did not show yet, at least the default lifetime.
    const until = Math.max(latestExpiry(candidates), epochSecondsOf(at) + CUTOFF_UNSEEN_LIFETIME_SECONDS);
    const last: CutoffEntry = { ...cutoff(at), until };
    // The call tells of itself once (one `sessions.revoked`), from its last entry on its first record
    // only, written last: a call told of has written all of its cut-offs.
    const notice: CutoffNotice = { scope: requestedScope(command), revoked, writtenAt: at };
    const [announcing, ...others] = targets;
    const write = { countedThrough: first.at, now: at };
    if (others.length > 0) await deps.cutoffs.writeCutoff(others, { entry: last, ...write });
    if (announcing) await deps.cutoffs.writeCutoff([announcing], { entry: { ...last, notice }, ...write });
    return { revoked };
  } catch (error) {
    if (error instanceof DependencyUnavailableError)
      throw new RevocationUnfinishedError(first.at, { cause: error });
    throw error;
  }
}

/**
 * The call's first cut-off, in every one of its records or in none: the records are written side by
 * side, and when one cannot be (DynamoDB unavailable, or other writes kept reaching it first), the entry
 * is removed again from every record (a write whose answer was lost may have landed), and the caller is
 * told nothing was revoked. Only if that removal fails too is it told that part may be.
 */
async function writeFirst(
  deps: RevokeUserSessionsDeps,
  targets: readonly CutoffScope[],
  entry: CutoffEntry,
): Promise<void> {
  const written = await Promise.allSettled(
    targets.map((scope) => deps.cutoffs.writeCutoff([scope], { entry, now: entry.at })),
  );
  const failure = written.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (!failure) return;
  try {
    await deps.cutoffs.removeCutoffEntry(targets, entry.id, entry.at);
  } catch (undo) {
    throw new RevocationPartlyRecordedError({ cause: undo });
  }
  if (failure.reason instanceof DependencyUnavailableError) {
    throw new RevocationNotRecordedError({ cause: failure.reason });
  }
  throw failure.reason;
}

/** The selection as the caller named it, for the call's event. */
function requestedScope(command: RevokeUserSessionsCommand): RevokedScope {
  return {
    ...(command.userId !== undefined ? { userId: command.userId } : {}),
    ...(command.boardId !== undefined ? { boardId: command.boardId } : {}),
  };
}

/** An index scope the call counts, and the records the call writes that together cover its sessions. */
interface CountScope {
  scope: SessionScope;
  coveredBy: readonly CutoffScope[];
}

/**
 * For each count scope, the instant up to which earlier counted cut-offs (not this call's, `own`) of the
 * records covering it cover every session the count could take from it: the earliest, among those
 * records, of the latest counted cut-off each holds (`countedThrough`). The sessions created at or before
 * it are covered, so the count would leave them out anyway: reading only those created after it keeps
 * the count exact. Undefined for a scope one of whose records holds no such cut-off.
 */
function coveredThrough(
  records: readonly CutoffRecord[],
  counts: readonly CountScope[],
  own: string,
): Array<string | undefined> {
  const byKey = new Map(records.map((record) => [cutoffScopeKey(record.scope), record]));
  const except = new Set([own]);
  return counts.map(({ coveredBy }) => {
    let through: string | undefined;
    for (const scope of coveredBy) {
      const record = byKey.get(cutoffScopeKey(scope));
      const counted = record && countedThrough(record, except);
      if (counted === undefined) return undefined;
      if (through === undefined || counted < through) through = counted;
    }
    return through;
  });
}

/**
 * What a call writes, and the index scopes holding the sessions it counts. Every record is one only the
 * caller's tenant writes: the caller's own (its key owner's sessions), and those of the organizations it
 * is a member of, keyed by the tenant (sessions record it when created), so no list of members is kept.
 */
async function planCutoffs(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  command: RevokeUserSessionsCommand,
): Promise<{ targets: CutoffScope[]; counts: CountScope[] }> {
  const { userId, boardId } = command;
  if (userId === undefined) {
    const board = await deps.boards.get(boardId);
    if (!board) throw new BoardNotFoundError(boardId);
    if (!(await deps.memberships.isMember(board.orgId, caller.userId))) {
      throw new BoardAccessDeniedError(BOARD_REVOKE_DENIED);
    }
    const scope: CutoffScope = { kind: 'board', boardId };
    return { targets: [scope], counts: [{ scope: { kind: 'board', boardId }, coveredBy: [scope] }] };
  }
  const countScopes = await scopesFor(deps, caller, command);
  const orgs = countScopes.flatMap((scope) => (scope.kind === 'orgUser' ? [scope.orgId] : []));
  const tenantOf = (orgId: string): Tenant => ({ kind: 'organization', id: orgId });
  if (boardId !== undefined) {
    // One board: its organization's tenant's sessions there when the caller is a member, and its own.
    const own: CutoffScope = { kind: 'creatorBoardUser', creatorUserId: caller.userId, boardId, userId };
    const tenants = orgs.map(
      (orgId): CutoffScope => ({ kind: 'tenantBoardUser', tenant: tenantOf(orgId), boardId, userId }),
    );
    return {
      targets: [own, ...tenants],
      counts: countScopes.map((scope) => ({
        scope,
        coveredBy: scope.kind === 'orgUser' ? [own, ...tenants] : [own],
      })),
    };
  }
  const own: CutoffScope = { kind: 'creatorUser', creatorUserId: caller.userId, userId };
  const tenants = new Map(
    orgs.map((orgId): [string, CutoffScope] => [
      orgId,
      { kind: 'tenantUser', tenant: tenantOf(orgId), userId },
    ]),
  );
  return {
    targets: [own, ...tenants.values()],
    counts: countScopes.map((scope) => {
      const tenant = scope.kind === 'orgUser' ? tenants.get(scope.orgId) : undefined;
      return { scope, coveredBy: tenant ? [own, tenant] : [own] };
    }),
  };
}

/** The latest expiry among the candidates, in epoch seconds (0 for none). */
function latestExpiry(candidates: readonly CountCandidate[]): number {
  let latest = '';
  for (const candidate of candidates) if (candidate.expiresAt > latest) latest = candidate.expiresAt;
  return latest === '' ? 0 : epochSecondsOf(latest);
}

/**
 * The sessions the scopes hold that were active at `at`, each once, within the caller's tenants for a
 * selection by user: in an organization's scope, those of the organization's tenant (`TenantGuess`: the
 * index holds no tenant) and the caller's own. Every scope is read at once. A session the caller created
 * on a board of one of its organizations is in two scopes, the organization's and the caller's own: the
 * caller's scope leaves it out (at the index where it can, here always), so the scopes' sessions never
 * overlap. A user's scope may hold 100,000 sessions, so nothing here allocates per session beyond the
 * list it returns: a creator's membership is read once, not per session.
 */
async function collect(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  scopes: readonly SessionScope[],
  at: string,
  byUser: boolean,
  coveredThrough: ReadonlyArray<string | undefined>,
  guess: TenantGuess,
): Promise<CountCandidate[]> {
  const orgs = scopes.flatMap((scope) => (scope.kind === 'orgUser' ? [scope.orgId] : []));
  const found = await Promise.all(
    scopes.map(async (scope, i) => {
      const after = coveredThrough[i];
      // A cut-off at or after this one (another call's, a moment ago) covers every session it could count.
      if (after !== undefined && after >= at) return [];
      const since = after !== undefined ? { after } : {};
      if (scope.kind === 'creatorUser' && orgs.length > 0) {
        const candidates = await deps.sessions.scopeCandidates(scope, at, { exceptOrgs: orgs, ...since });
        const counted = new Set(orgs);
        return candidates.filter((candidate) => !counted.has(candidate.orgId));
      }
      const candidates = await deps.sessions.scopeCandidates(scope, at, since);
      if (!byUser || scope.kind !== 'orgUser') return candidates;
      const tenants = await guess.ofAll(candidates);
      const admitted = (candidate: CountCandidate, i: number) =>
        candidate.createdByUserId === caller.userId || tenants[i]?.kind === 'organization';
      return candidates.every(admitted) ? candidates : candidates.filter(admitted);
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
 * `except` names are not earlier: they are this call's). A candidate's tenant is looked up only where it
 * decides (a tenant record holds a cut-off since its creation).
 */
export async function countActive(
  candidates: readonly CountCandidate[],
  earlier: CutoffRecord[],
  at: string,
  except: ReadonlySet<string>,
  guess: TenantGuess,
): Promise<number> {
  let active = 0;
  const undecided: CountCandidate[] = [];
  for (const candidate of candidates) {
    if (candidate.createdAt > at) continue;
    if (tenantDecides(candidate, earlier)) {
      undecided.push(candidate);
      continue;
    }
    // Whatever its tenant, the records say the same: any will do.
    const subject = { ...candidate, tenant: legacyTenant(candidate.orgId) };
    if (coveringCutoff(subject, earlier, except) === undefined) active += 1;
  }
  const tenants = await guess.ofAll(undecided);
  undecided.forEach((candidate, i) => {
    const subject = { ...candidate, tenant: tenants[i] as Tenant };
    if (coveringCutoff(subject, earlier, except) === undefined) active += 1;
  });
  return active;
}
