import type { KeyOwner } from '#lib/domain/api-key';
import type { BoardRepository, Clock, MembershipRepository, SessionRepository } from '#lib/domain/ports';
import { ScopeMerge, scopesFor } from './session-access';

export interface RevokeUserSessionsDeps {
  sessions: SessionRepository;
  boards: BoardRepository;
  memberships: MembershipRepository;
  clock: Clock;
}

export interface RevokeUserSessionsCommand {
  userId: string;
  boardId?: string;
}

/** Revocations in flight at once: enough to revoke 10,000 sessions in seconds, few enough not to throttle. */
export const REVOKE_CONCURRENCY = 25;
/** Index page size while collecting the sessions to revoke (keys only, so a page is small). */
const COLLECT_PAGE_SIZE = 1_000;

/**
 * Revokes every session of an external user (on one board, when given) that the caller may access and
 * that is not revoked yet; returns how many this call revoked. Each revocation is one conditional update,
 * so a retry after a failure revokes the rest and never counts a session twice.
 */
export async function revokeUserSessions(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  command: RevokeUserSessionsCommand,
): Promise<{ revoked: number }> {
  const scopes = await scopesFor(deps, caller, command);
  const merge = new ScopeMerge(deps.sessions, scopes, undefined, COLLECT_PAGE_SIZE);
  const ids: string[] = [];
  for (let ref = await merge.next(); ref; ref = await merge.next()) ids.push(ref.id);

  const revocation = {
    revokedAt: deps.clock.now().toISOString(),
    byUserId: caller.userId,
    byKeyId: caller.keyId,
  };
  let revoked = 0;
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      if (await deps.sessions.markRevoked(id, revocation)) revoked += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(REVOKE_CONCURRENCY, ids.length) }, worker));
  return { revoked };
}
