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
