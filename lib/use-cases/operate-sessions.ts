import { ValidationError } from '#lib/domain/errors';
import type { Clock, SessionRepository } from '#lib/domain/ports';
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
  return operatorView(session, deps.clock.now());
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
  return (await selected(deps, query))
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
  return operatorView(revoked, now);
}

/** Revokes every session of a user (on one board, when given) that is not revoked yet; counts them. */
export async function revokeSessionsAsOperator(
  deps: OperateSessionsDeps,
  query: { userId: string; boardId?: string },
): Promise<{ revoked: number }> {
  const revocation = { revokedAt: deps.clock.now().toISOString(), byUserId: OPERATOR, byKeyId: null };
  let revoked = 0;
  for (const session of await selected(deps, query)) {
    if (await deps.sessions.markRevoked(session.id, revocation)) revoked += 1;
  }
  return { revoked };
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
