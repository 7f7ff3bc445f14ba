/** The one visibility the spec names; any other value (or a missing one) counts as not public. */
export const PUBLIC_VISIBILITY = 'PUBLIC';

export interface Board {
  boardId: string;
  orgId: string;
  visibility: string;
  name: string | null;
}

/** An embed session as stored: everything but the token, which is kept only as `tokenHash`. */
export interface StoredSession {
  id: string;
  boardId: string;
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
}

/** The session as the API returns it (spec "Embed session"). */
export interface Session extends Omit<StoredSession, 'tokenHash'> {
  token: string;
}

export type ApiKeyStatus = 'ACTIVE' | 'REVOKED';

export interface ApiKeyRecord {
  keyHash: string;
  keyId: string;
  userId: string;
  name: string | null;
  status: ApiKeyStatus;
  createdAt: string;
  revokedAt: string | null;
}

export interface BoardRepository {
  get(boardId: string): Promise<Board | undefined>;
  put(board: Board): Promise<void>;
  list(): Promise<Board[]>;
}

export interface MembershipRepository {
  isMember(orgId: string, userId: string): Promise<boolean>;
  add(orgId: string, userId: string): Promise<void>;
  remove(orgId: string, userId: string): Promise<boolean>;
}

export interface SessionRepository {
  /** Stores a new session; never overwrites an existing one. */
  create(session: StoredSession): Promise<void>;
  findByTokenHash(tokenHash: string): Promise<StoredSession | undefined>;
}

export interface ApiKeyRepository {
  getByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  create(record: ApiKeyRecord): Promise<void>;
  /** Marks the key revoked; returns the updated record or undefined when no key has that id. */
  revoke(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined>;
  list(userId?: string): Promise<ApiKeyRecord[]>;
}

/** True only for a board whose visibility is exactly `PUBLIC`. */
export function isPublicBoard(board: Board): boolean {
  return board.visibility === PUBLIC_VISIBILITY;
}
