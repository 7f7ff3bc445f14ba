/**
 * Everything a use case needs from the outside world, as interfaces. Adapters (lib/dynamodb,
 * lib/platform/system.ts) implement them; tests pass in-memory fakes.
 */
import type { ApiKeyRecord } from './api-key';
import type { Board } from './board';
import type { StoredSession } from './session';

/** Source of the current time; injected so tests can freeze it. */
export interface Clock {
  now(): Date;
}

/** Source of cryptographic randomness; injected so tests can make it deterministic. */
export interface RandomSource {
  bytes(size: number): Buffer;
  uuid(): string;
}

/** Waits `ms` milliseconds; injected so tests of retries need not wait. */
export type Sleep = (ms: number) => Promise<void>;

export interface BoardRepository {
  get(boardId: string): Promise<Board | undefined>;
  put(board: Board): Promise<void>;
  list(): Promise<Board[]>;
}

export interface MembershipRepository {
  isMember(orgId: string, userId: string): Promise<boolean>;
  /** Records the membership (idempotent), stamped with the time it was added. */
  add(orgId: string, userId: string, addedAt: string): Promise<void>;
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
