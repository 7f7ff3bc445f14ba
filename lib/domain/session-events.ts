import { createHash } from 'node:crypto';
import { type EventActor, eventSequence, type RoutedSessionEvent, type SessionEventType } from './events';
import { isOperatorActor } from './operators';
import { type StoredSession, toSessionView } from './session';

/**
 * The events of one session, as the change feed and the expiry sweep both derive them: fixed ids, the
 * session as its creator saw it at the event's instant, and who caused it.
 */

/**
 * The event id: `evt_` and the first 128 bits of SHA-256 over the session id and the type, hex. Each type
 * happens once per session, so a record delivered twice, or derived by a poller and by a sweep alike,
 * names the same event.
 */
export function eventId(sessionId: string, type: SessionEventType): string {
  return `evt_${createHash('sha256')
    .update(JSON.stringify([sessionId, type]))
    .digest('hex')
    .slice(0, 32)}`;
}

/**
 * Who caused a revocation: the admin CLI is an operator; the key owner who created the session revoking
 * it is `api_key` (with the key it used); anyone else allowed to revoke it is a member of the
 * organization owning its board, revoking another tenant's session: `board_organization`, without that
 * tenant's key id.
 */
export function revocationActor(session: StoredSession): EventActor {
  if (isOperatorActor(session.revokedByUserId)) return { type: 'operator' };
  if (session.revokedByUserId !== null && session.revokedByUserId === session.createdByUserId) {
    return session.revokedByKeyId !== null
      ? { type: 'api_key', keyId: session.revokedByKeyId }
      : { type: 'api_key' };
  }
  return { type: 'board_organization' };
}

/**
 * One event of a session. `occurredAt` is the time the session's item recorded for it, and
 * `data.session` the session as its creator sees it at that instant, so deriving the same event again
 * (a redelivered record, a rerun sweep) yields exactly the same event.
 */
export function sessionEvent(
  session: StoredSession,
  type: SessionEventType,
  occurredAt: string,
  actor: EventActor,
): RoutedSessionEvent {
  return {
    event: {
      id: eventId(session.id, type),
      type,
      occurredAt,
      sequence: eventSequence(type),
      data: { session: toSessionView(session, new Date(occurredAt)), actor },
    },
    ownerUserId: session.createdByUserId,
    sessionId: session.id,
    boardId: session.boardId,
    tenant: session.tenant,
  };
}

/** The creator's key: creation and opening are the key owner's and its end user's doing. */
export function creatorActor(session: StoredSession): EventActor {
  return session.createdByKeyId !== ''
    ? { type: 'api_key', keyId: session.createdByKeyId }
    : { type: 'api_key' };
}

/** `session.expired`, at `expiresAt`, for a session that was not revoked before it expired. */
export function expiredEvent(session: StoredSession): RoutedSessionEvent | undefined {
  if (session.revokedAt !== null && session.revokedAt <= session.expiresAt) return undefined;
  // Revoked after expiry changes nothing: the session had ended already, as expired.
  const asItWas: StoredSession = { ...session, revokedAt: null, revokedByUserId: null, revokedByKeyId: null };
  return sessionEvent(asItWas, 'session.expired', session.expiresAt, creatorActor(session));
}
