import type { KeyOwner } from '#lib/domain/api-key';
import { SessionNotFoundError } from '#lib/domain/errors';
import type { Clock, MembershipRepository, SessionRepository } from '#lib/domain/ports';
import {
  isSessionId,
  type OtherTenantSessionView,
  type SessionView,
  type StoredSession,
} from '#lib/domain/session';
import { canAccess, viewFor } from './session-access';
import { TenantFilter } from './session-streams';

/** A session as the caller sees it: whole when its tenant's, its outline when another tenant's. */
type Seen = Promise<SessionView | OtherTenantSessionView>;

export interface ManageSessionDeps {
  sessions: SessionRepository;
  memberships: MembershipRepository;
  clock: Clock;
}

/**
 * The session with this id, if the caller may access it; otherwise (or when there is none) a 404. A
 * session another tenant created on the caller's organization's public board shows only its outline.
 */
export async function getSession(deps: ManageSessionDeps, caller: KeyOwner, id: string): Seen {
  const { session, own } = await accessibleSession(deps, caller, id);
  return viewFor(session, deps.clock.now(), own);
}

/**
 * Revokes a session the caller may access. Idempotent: revoking again returns the session with its first
 * revocation time, and a session a cut-off covers already is revoked since that cut-off (nothing is
 * written). The embed page reads the session consistently, so its link stops working at once.
 * The organization owning the board may revoke a session another tenant created on it, and sees its outline.
 */
export async function revokeSession(deps: ManageSessionDeps, caller: KeyOwner, id: string): Seen {
  const { session, own } = await accessibleSession(deps, caller, id);
  const now = deps.clock.now();
  if (session.revokedAt !== null) return viewFor(session, now, own);
  const revoked = await deps.sessions.revoke(id, {
    revokedAt: now.toISOString(),
    byUserId: caller.userId,
    byKeyId: caller.keyId,
  });
  // Gone in between (its TTL deleted it): as if it had never been there.
  if (!revoked) throw new SessionNotFoundError();
  return viewFor(revoked, now, own);
}

async function accessibleSession(
  deps: ManageSessionDeps,
  caller: KeyOwner,
  id: string,
): Promise<{ session: StoredSession; own: boolean }> {
  // Not an id this service issues: no read, and the same answer as for someone else's session.
  if (!isSessionId(id)) throw new SessionNotFoundError();
  const session = await deps.sessions.get(id);
  if (!session) throw new SessionNotFoundError();
  // The access check, the cut-offs that could cover it and whether its creator is of the caller's tenant
  // (which decides between the full view and the outline) are read at once: one round trip after the
  // session's, however many reads.
  const [allowed, [covered], own] = await Promise.all([
    canAccess(deps.memberships, caller, session),
    deps.sessions.applyCutoffs([session]),
    new TenantFilter(deps.memberships, caller).ownTenant(session),
  ]);
  if (!allowed) throw new SessionNotFoundError();
  return { session: covered ?? session, own };
}
