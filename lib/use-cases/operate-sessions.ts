import type { CutoffTarget } from '#lib/domain/cutoffs';
import { ValidationError } from '#lib/domain/errors';
import type { Clock, RandomSource, SessionRepository } from '#lib/domain/ports';
import {
  isSessionId,
  type SessionStatus,
  type SessionView,
  type StoredSession,
  sessionStatus,
  toSessionView,
} from '#lib/domain/session';

/** The name operators' revocations are recorded under (they use no API key). */
export const OPERATOR = 'admin-cli';

/** What operators see of a session: all but the token hash, including who created and revoked it. */
export type OperatorSessionView = SessionView &
  Pick<StoredSession, 'orgId' | 'createdByUserId' | 'createdByKeyId' | 'revokedByUserId' | 'revokedByKeyId'>;

export interface OperateSessionsDeps {
  sessions: SessionRepository;
  clock: Clock;
  /** Draws each stage cut-off's id. */
  random: RandomSource;
}

export interface OperatorSessionQuery {
  userId?: string;
  boardId?: string;
  status?: SessionStatus;
  limit?: number;
}

/** One session by id, unscoped (operators see every tenant's); an unknown id is a usage error. */
export async function inspectSession(deps: OperateSessionsDeps, id: string): Promise<OperatorSessionView> {
  const session = isSessionId(id) ? await deps.sessions.get(id) : undefined;
  if (!session) throw new ValidationError(`No session has id "${id}"`);
  const [covered] = await deps.sessions.applyCutoffs([session]);
  return operatorView(covered ?? session, deps.clock.now());
}

/**
 * The sessions of a user (a table scan: operators only) or of a board (its index), newest first,
 * optionally of one status, at most `limit`.
 */
export async function findSessions(
  deps: OperateSessionsDeps,
  query: OperatorSessionQuery,
): Promise<OperatorSessionView[]> {
  const now = deps.clock.now();
  return (await deps.sessions.applyCutoffs(await selected(deps, query)))
    .filter((session) => query.status === undefined || sessionStatus(session, now) === query.status)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
    .slice(0, query.limit ?? Number.POSITIVE_INFINITY)
    .map((session) => operatorView(session, now));
}

/** Revokes one session, recorded as the operator's; idempotent like the API's revoke. */
export async function revokeSessionAsOperator(
  deps: OperateSessionsDeps,
  id: string,
): Promise<OperatorSessionView> {
  const now = deps.clock.now();
  const revoked = isSessionId(id)
    ? await deps.sessions.revoke(id, { revokedAt: now.toISOString(), byUserId: OPERATOR, byKeyId: null })
    : undefined;
  if (!revoked) throw new ValidationError(`No session has id "${id}"`);
  const [covered] = await deps.sessions.applyCutoffs([revoked]);
  return operatorView(covered ?? revoked, now);
}

/**
 * Revokes, with one cut-off, every session of the stage created at or before `before` (not in the
 * future), or only those on one board, or only those of one external user id (every tenant's). Counts
 * the sessions of that selection that were active at the cut-off and not covered by an earlier one.
 */
export async function revokeAllAsOperator(
  deps: OperateSessionsDeps,
  command: { before: string; boardId?: string; userId?: string },
): Promise<{ revoked: number; cutoff: string; scope: string }> {
  const { boardId, userId } = command;
  if (boardId !== undefined && userId !== undefined) {
    throw new ValidationError('--board and --user cannot be combined: give one of them, or neither');
  }
  const before = new Date(command.before);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(command.before) || Number.isNaN(before.getTime())) {
    throw new ValidationError('--before must be an ISO 8601 time, such as 2026-01-01T00:00:00Z');
  }
  const now = deps.clock.now();
  if (before.getTime() > now.getTime()) throw new ValidationError('--before must not be in the future');
  const at = before.toISOString();

  const target: CutoffTarget =
    boardId !== undefined
      ? { scope: { kind: 'board', boardId } }
      : userId !== undefined
        ? { scope: { kind: 'user', userId } }
        : { scope: { kind: 'stage' } };
  const sessions =
    boardId !== undefined || userId !== undefined
      ? await selected(deps, command)
      : await deps.sessions.listAll();
  const earlier = await deps.sessions.applyCutoffs(sessions);
  let revoked = 0;
  for (const session of earlier) {
    if (session.createdAt <= at && sessionStatus(session, before) === 'active') revoked += 1;
  }
  await deps.sessions.writeCutoff([target], {
    id: deps.random.uuid(),
    at,
    byUserId: OPERATOR,
    byKeyId: null,
  });
  return { revoked, cutoff: at, scope: target.scope.kind };
}

async function selected(deps: OperateSessionsDeps, query: OperatorSessionQuery): Promise<StoredSession[]> {
  const { userId, boardId } = query;
  if (boardId !== undefined) {
    const ids: string[] = [];
    let below: string | undefined;
    do {
      const page = await deps.sessions.scanScope(
        { by: 'board', boardId },
        { ...(below !== undefined ? { below } : {}), limit: 1_000 },
      );
      ids.push(...page.refs.map((ref) => ref.id));
      below = page.next;
    } while (below !== undefined);
    const sessions = await deps.sessions.getMany(ids);
    return userId === undefined ? sessions : sessions.filter((session) => session.userId === userId);
  }
  if (userId === undefined) throw new ValidationError('--user or --board is required');
  return deps.sessions.listAllOfUser(userId);
}

function operatorView(session: StoredSession, now: Date): OperatorSessionView {
  return {
    ...toSessionView(session, now),
    orgId: session.orgId,
    createdByUserId: session.createdByUserId,
    createdByKeyId: session.createdByKeyId,
    revokedByUserId: session.revokedByUserId,
    revokedByKeyId: session.revokedByKeyId,
  };
}
