import type { KeyOwner } from '#lib/domain/api-key';
import { isPublicBoard } from '#lib/domain/board';
import {
  hashCredential,
  isSessionTokenFormat,
  newSessionToken,
  sessionIdOfToken,
} from '#lib/domain/credentials';
import { BoardAccessDeniedError, BoardNotFoundError, ValidationError } from '#lib/domain/errors';
import type {
  BoardRepository,
  Clock,
  MembershipRepository,
  RandomSource,
  SessionRepository,
} from '#lib/domain/ports';
import { type CreatedSessionView, type StoredSession, toCreatedSessionView } from '#lib/domain/session';
import { tenantOf } from '#lib/domain/tenant';

/** The latest instant an ISO 8601 timestamp with a four-digit year can express. */
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A validated create-session request with optional fields normalized (absent or null → null, metadata → {}). */
export type CreateSessionRequest = Pick<
  StoredSession,
  | 'boardId'
  | 'userId'
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'avatarUrl'
  | 'plan'
  | 'metadata'
  | 'bindToBrowser'
> & { expiresInSeconds: number };

export interface CreateSessionDeps {
  boards: BoardRepository;
  memberships: MembershipRepository;
  sessions: SessionRepository;
  clock: Clock;
  random: RandomSource;
}

export interface CreateSessionCommand {
  /** The owner of the API key that authorized the call, and that key's id. */
  keyOwner: KeyOwner;
  request: CreateSessionRequest;
  /** Base URL the embed page is served from, without a trailing slash. */
  baseUrl: string;
  /**
   * The session's id and token when they were fixed before this run (a keyed create fixes them when it
   * claims its Idempotency-Key, so that a re-run writes the very same session); drawn now otherwise.
   */
  identity?: SessionIdentity;
}

/** What makes a session this one: its id and its token. */
export interface SessionIdentity {
  id: string;
  token: string;
}

/** A new session identity, to fix before the session is written. */
export function newSessionIdentity(random: RandomSource): SessionIdentity {
  const token = newSessionToken(random);
  return { id: sessionIdOfToken(token), token };
}

/** An identity as text, to keep with an Idempotency-Key's claim (sealed there: it holds the token). */
export function encodeSessionIdentity(identity: SessionIdentity): string {
  return JSON.stringify({ id: identity.id, token: identity.token });
}

/** The identity `encodeSessionIdentity` wrote; undefined for anything else. */
export function decodeSessionIdentity(text: string | undefined): SessionIdentity | undefined {
  if (text === undefined) return undefined;
  try {
    const { id, token } = JSON.parse(text) as Partial<SessionIdentity>;
    if (typeof id !== 'string' || id === '' || typeof token !== 'string' || !isSessionTokenFormat(token)) {
      return undefined;
    }
    return { id, token };
  } catch {
    return undefined;
  }
}

export interface CreatedSession {
  session: CreatedSessionView;
  sessionToken: string;
  embedUrl: string;
}

/**
 * Creates an embed session: checks the board exists and is accessible to the key owner, decides whose end
 * user it is (its tenant), then stores the session with only the hash of its new token. Three DynamoDB
 * calls: board, membership (one consistent read, which decides both access to a private board and the
 * tenant on any board), one conditional put. A put that meets this very session (same id and token: an earlier
 * run of the same keyed create, or the SDK's retry of a put whose answer was lost) is the success it was,
 * and the answer describes the session as stored.
 */
export async function createSession(
  deps: CreateSessionDeps,
  command: CreateSessionCommand,
): Promise<CreatedSession> {
  const { request } = command;
  // One clock reading for both timestamps, so expiresAt - createdAt is exactly the requested lifetime.
  const createdAtMs = deps.clock.now().getTime();
  const expiresAtMs = createdAtMs + request.expiresInSeconds * 1000;
  if (expiresAtMs > MAX_TIMESTAMP_MS) {
    throw new ValidationError('expiresInSeconds is too large: expiresAt would be after year 9999');
  }

  const board = await deps.boards.get(request.boardId);
  if (!board) throw new BoardNotFoundError(request.boardId);
  const member = await isOrgMember(deps.memberships, board.orgId, command.keyOwner.userId);
  if (!isPublicBoard(board) && !member) throw new BoardAccessDeniedError();

  const { id, token } = command.identity ?? newSessionIdentity(deps.random);
  const session: StoredSession = {
    id,
    boardId: request.boardId,
    orgId: board.orgId,
    // A member creates sessions for its organization's users; anyone else on a public board for its own.
    tenant: tenantOf(board.orgId, command.keyOwner.userId, member),
    tokenHash: hashCredential(token),
    userId: request.userId,
    email: request.email,
    firstName: request.firstName,
    lastName: request.lastName,
    avatarUrl: request.avatarUrl,
    plan: request.plan,
    metadata: request.metadata,
    createdAt: new Date(createdAtMs).toISOString(),
    expiresAt: new Date(expiresAtMs).toISOString(),
    createdByUserId: command.keyOwner.userId,
    createdByKeyId: command.keyOwner.keyId,
    revokedAt: null,
    revokedByUserId: null,
    revokedByKeyId: null,
    bindToBrowser: request.bindToBrowser,
    bindingHash: null,
    boundAt: null,
  };
  const stored = await deps.sessions.create(session);

  return {
    session: toCreatedSessionView(stored, token, new Date(createdAtMs)),
    sessionToken: token,
    embedUrl: `${command.baseUrl}/embed?token=${token}`,
  };
}

/** A board recorded without an organization belongs to nobody, so no membership can grant access. */
async function isOrgMember(memberships: MembershipRepository, orgId: string, userId: string) {
  return orgId !== '' && (await memberships.isMember(orgId, userId));
}
