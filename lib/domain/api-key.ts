export type ApiKeyStatus = 'ACTIVE' | 'REVOKED';

/** An API key as stored: only the SHA-256 of the key, never the key. */
export interface ApiKeyRecord {
  keyHash: string;
  keyId: string;
  userId: string;
  name: string | null;
  status: ApiKeyStatus;
  createdAt: string;
  revokedAt: string | null;
}

/** Who called: the owner of the API key that authorized the request, and that key's public id. */
export interface KeyOwner {
  userId: string;
  keyId: string;
}
