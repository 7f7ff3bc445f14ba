import type { Tenant } from './tenant';

/**
 * The embed session. The token itself is never stored: only its hash, so a copy of the table opens
 * nothing. Who created a session and who revoked it are recorded, because access to a session follows
 * from its board's organization and from its creator.
 */
export interface StoredSession {
  id: string;
  boardId: string;
  /** The organization that owned the board when the session was created (boards never change owner). */
  orgId: string;
  /**
   * Whose end user this is, decided at creation: the board's organization when the key owner was then a
   * member of it, else the key owner. The pairwise `sub` board applications see is per tenant.
   */
  tenant: Tenant;
  tokenHash: string;
  userId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  avatarUrl: string | null;
  plan: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  expiresAt: string;
  /** The owner and the id of the API key that created the session. */
  createdByUserId: string;
  createdByKeyId: string;
  revokedAt: string | null;
  /** Who revoked it: a key owner and key id, or `admin-cli` without a key. */
  revokedByUserId: string | null;
  revokedByKeyId: string | null;
  /** Created with `bindToBrowser`: the first load binds the link to that browser. */
  bindToBrowser: boolean;
  /** SHA-256 of the binding cookie's secret, keyed with the session id; never the secret itself. */
  bindingHash: string | null;
  /** When the first load bound the session to a browser. */
  boundAt: string | null;
  /** When the embed page first loaded successfully (recorded once; absent on sessions read before). */
  openedAt?: string | null;
  /**
   * The copy of each cut-off record its loads read (docs/scale.md#copies-of-a-record), recorded when it
   * is stored; absent on sessions stored before records had copies, which read copy 0.
   */
  readsCutoffCopy?: number;
}

export type SessionStatus = 'active' | 'expired' | 'revoked';
export const SESSION_STATUSES: readonly SessionStatus[] = ['active', 'expired', 'revoked'];

/** The spec's session fields, the token excepted, in the spec's order. */
export const SPEC_SESSION_FIELDS = [
  'id',
  'boardId',
  'userId',
  'email',
  'firstName',
  'lastName',
  'avatarUrl',
  'plan',
  'metadata',
  'expiresAt',
  'createdAt',
] as const;

/** A session as the spec describes it, without its token. */
export type SpecSession = Pick<StoredSession, (typeof SPEC_SESSION_FIELDS)[number]>;

/**
 * Exactly the spec's fields of a session, in the spec's order: nothing the service keeps beside them.
 * Built from SPEC_SESSION_FIELDS, since the embed page makes one per load; the list page's views are
 * written out as one literal (toSessionView).
 */
export function specSession(session: SpecSession): SpecSession {
  const spec: Record<string, unknown> = {};
  for (const field of SPEC_SESSION_FIELDS) spec[field] = session[field];
  return spec as SpecSession;
}

/**
 * The session as the API shows it: the spec's fields without the token, its status and revocation time,
 * whether it binds to a browser and when it was bound.
 */
export type SessionView = SpecSession &
  Pick<StoredSession, 'revokedAt' | 'bindToBrowser' | 'boundAt'> & { status: SessionStatus };

/** The session in the create response, the only place its token ever appears. */
export type CreatedSessionView = Pick<SessionView, 'id' | 'boardId'> & { token: string } & Omit<
    SessionView,
    'id' | 'boardId'
  >;

/** What binding a session to a browser records. */
export interface SessionBinding {
  bindingHash: string;
  boundAt: string;
}

/** Who revoked a session, and when. */
export interface Revocation {
  revokedAt: string;
  byUserId: string;
  byKeyId: string | null;
}

/** Revoked when revokedAt is set, otherwise expired from expiresAt on, otherwise active; computed when read. */
export function sessionStatus(
  session: Pick<StoredSession, 'revokedAt' | 'expiresAt'>,
  now: Date,
): SessionStatus {
  if (session.revokedAt !== null) return 'revoked';
  return now.getTime() >= Date.parse(session.expiresAt) ? 'expired' : 'active';
}

/**
 * The API's view of a stored session, in the spec's field order, then the service's own fields: no token,
 * no hash (of the token or of a binding secret), nothing derived from either.
 */
export function toSessionView(session: StoredSession, now: Date): SessionView {
  // The spec's fields in SPEC_SESSION_FIELDS' order (a test holds the two together), then the service's
  // own, as one literal: a list page builds up to a hundred of these per request.
  return {
    id: session.id,
    boardId: session.boardId,
    userId: session.userId,
    email: session.email,
    firstName: session.firstName,
    lastName: session.lastName,
    avatarUrl: session.avatarUrl,
    plan: session.plan,
    metadata: session.metadata,
    expiresAt: session.expiresAt,
    createdAt: session.createdAt,
    status: sessionStatus(session, now),
    revokedAt: session.revokedAt,
    bindToBrowser: session.bindToBrowser,
    boundAt: session.boundAt,
  };
}

/**
 * What a board's organization sees of a session another tenant created on its public board: that it
 * exists, its board, its state and times, and that another tenant created it; never that tenant's user
 * (id, e-mail, names, avatar, plan, metadata) nor whether it binds to a browser.
 */
export type OtherTenantSessionView = Pick<
  SessionView,
  'id' | 'boardId' | 'status' | 'createdAt' | 'expiresAt' | 'revokedAt' | 'boundAt'
> & { createdByAnotherTenant: true };

/** The view of a session another tenant created. */
export function toOtherTenantSessionView(session: StoredSession, now: Date): OtherTenantSessionView {
  return {
    id: session.id,
    boardId: session.boardId,
    status: sessionStatus(session, now),
    createdAt: session.createdAt,
    expiresAt: session.expiresAt,
    revokedAt: session.revokedAt,
    boundAt: session.boundAt,
    createdByAnotherTenant: true,
  };
}

/** The create response's session: the view with the token in the spec's place, right after boardId. */
export function toCreatedSessionView(session: StoredSession, token: string, now: Date): CreatedSessionView {
  const { id, boardId, ...rest } = toSessionView(session, now);
  return { id, boardId, token, ...rest };
}

/** A session id as the service issues them (a UUID); anything else names no session. */
export function isSessionId(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);
}
