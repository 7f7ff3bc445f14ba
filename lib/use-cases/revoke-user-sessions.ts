import type { KeyOwner } from '#lib/domain/api-key';
import type { BoardRepository, Clock, MembershipRepository, SessionRepository } from '#lib/domain/ports';
import { ScopeMerge, scopesFor, TenantFilter } from './session-access';

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
 * that is not revoked yet, within the caller's tenant (see TenantFilter); returns how many this call
 * revoked. The sessions are found through the scope indexes, which lag writes by a moment: a session
 * created in that moment may be left out, so revoke after the last create (or repeat the call). Each revocation is one conditional update,
 * so a retry after a failure revokes the rest and never counts a session twice.
 */
export async function revokeUserSessions(
  deps: RevokeUserSessionsDeps,
  caller: KeyOwner,
  command: RevokeUserSessionsCommand,
): Promise<{ revoked: number }> {
  const scopes = await scopesFor(deps, caller, command);
  const merge = new ScopeMerge(deps.sessions, scopes, undefined, COLLECT_PAGE_SIZE);
  const tenant = new TenantFilter(deps.memberships, caller);
  const ids: string[] = [];
  for (
    let refs = await merge.take(COLLECT_PAGE_SIZE);
    refs.length > 0;
    refs = await merge.take(COLLECT_PAGE_SIZE)
  ) {
    const admitted = await tenant.admitted(refs);
    for (const [i, ref] of refs.entries()) if (admitted[i]) ids.push(ref.id);
  }

  const revocation = {
    revokedAt: deps.clock.now().toISOString(),
    byUserId: caller.userId,
    byKeyId: caller.keyId,
  };
  let revoked = 0;
  let next = 0;
  let failed = false;
  const worker = async () => {
    // After a failure the others stop taking new sessions: the call answers 503, a retry does the rest.
    while (next < ids.length && !failed) {
      const id = ids[next++] as string;
      try {
        if (await deps.sessions.markRevoked(id, revocation)) revoked += 1;
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(REVOKE_CONCURRENCY, ids.length) }, worker));
  return { revoked };
}
