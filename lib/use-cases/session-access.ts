import type { KeyOwner } from '#lib/domain/api-key';
import type { BoardRepository, MembershipRepository, SessionScope } from '#lib/domain/ports';
import {
  type OtherTenantSessionView,
  type SessionView,
  type StoredSession,
  toOtherTenantSessionView,
  toSessionView,
} from '#lib/domain/session';

/**
 * Who may see and revoke a session: a member of the organization that owns its board, or the key owner
 * who created it (with any of its keys). Membership is read consistently, so losing it loses access at once.
 */
export async function canAccess(
  memberships: MembershipRepository,
  caller: KeyOwner,
  session: StoredSession,
): Promise<boolean> {
  if (session.createdByUserId !== '' && session.createdByUserId === caller.userId) return true;
  return session.orgId !== '' && (await memberships.isMember(session.orgId, caller.userId));
}

/** A session as the caller sees it: whole when its own tenant created it, else only its outline. */
export function viewFor(
  session: StoredSession,
  now: Date,
  ownTenant: boolean,
): SessionView | OtherTenantSessionView {
  return ownTenant ? toSessionView(session, now) : toOtherTenantSessionView(session, now);
}

/** Which sessions a query names: those of an external user, those on a board, or both at once. */
export interface SessionSelector {
  userId?: string;
  boardId?: string;
}

/**
 * The index scopes holding exactly the selected sessions the caller may access. On a board whose
 * organization the caller belongs to, every session is accessible; elsewhere only those it created. For
 * a user across boards, one scope per organization of the caller plus the ones it created; a session in
 * both is merged once.
 */
export async function scopesFor(
  deps: { boards: BoardRepository; memberships: MembershipRepository },
  caller: KeyOwner,
  selector: SessionSelector,
): Promise<SessionScope[]> {
  const { userId, boardId } = selector;
  if (boardId !== undefined) {
    const orgId = (await deps.boards.get(boardId))?.orgId ?? '';
    const member = orgId !== '' && (await deps.memberships.isMember(orgId, caller.userId));
    if (userId !== undefined) {
      return member
        ? [{ kind: 'orgUser', orgId, userId, boardId }]
        : [{ kind: 'creatorUser', creatorUserId: caller.userId, userId, boardId }];
    }
    return member
      ? [{ kind: 'board', boardId }]
      : [{ kind: 'creatorBoard', creatorUserId: caller.userId, boardId }];
  }
  if (userId === undefined) throw new Error('scopesFor needs a userId or a boardId');
  const orgs = await deps.memberships.orgsOf(caller.userId);
  return [
    ...orgs.map((orgId): SessionScope => ({ kind: 'orgUser', orgId, userId })),
    { kind: 'creatorUser', creatorUserId: caller.userId, userId },
  ];
}
