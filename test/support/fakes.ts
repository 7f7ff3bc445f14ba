import type { ApiKeyRecord } from '#lib/domain/api-key';
import type { Board } from '#lib/domain/board';
import type * as Ports from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';

/** In-memory boards that record every lookup. */
export class FakeBoards implements Ports.BoardRepository {
  readonly gets: string[] = [];
  private readonly boards = new Map<string, Board>();

  constructor(boards: Board[] = []) {
    for (const board of boards) this.boards.set(board.boardId, board);
  }

  async get(boardId: string): Promise<Board | undefined> {
    this.gets.push(boardId);
    return this.boards.get(boardId);
  }

  async put(board: Board): Promise<void> {
    this.boards.set(board.boardId, board);
  }

  async list(): Promise<Board[]> {
    return [...this.boards.values()];
  }
}

/** In-memory organization memberships that record every `isMember` query. */
export class FakeMemberships implements Ports.MembershipRepository {
  readonly queries: Array<{ orgId: string; userId: string }> = [];
  private readonly members = new Set<string>();

  constructor(members: Array<{ orgId: string; userId: string }> = []) {
    for (const { orgId, userId } of members) this.members.add(`${orgId}\u0000${userId}`);
  }

  async isMember(orgId: string, userId: string): Promise<boolean> {
    this.queries.push({ orgId, userId });
    return this.members.has(`${orgId}\u0000${userId}`);
  }

  readonly added: Array<{ orgId: string; userId: string; addedAt: string }> = [];

  async add(orgId: string, userId: string, addedAt: string): Promise<void> {
    this.added.push({ orgId, userId, addedAt });
    this.members.add(`${orgId}\u0000${userId}`);
  }

  async remove(orgId: string, userId: string): Promise<boolean> {
    return this.members.delete(`${orgId}\u0000${userId}`);
  }
}

/** In-memory sessions; `create` refuses an existing id like the conditional put does. */
export class FakeSessions implements Ports.SessionRepository {
  readonly created: StoredSession[] = [];
  /** When set, `create` rejects with it (a storage failure). */
  failWith: Error | undefined;

  async create(session: StoredSession): Promise<void> {
    if (this.failWith) throw this.failWith;
    if (this.created.some((s) => s.id === session.id)) throw new Error(`session ${session.id} exists`);
    this.created.push(structuredClone(session));
  }

  async findByTokenHash(tokenHash: string): Promise<StoredSession | undefined> {
    return this.created.find((s) => s.tokenHash === tokenHash);
  }
}

/** In-memory API keys keyed by hash, recording every lookup. */
export class FakeApiKeys implements Ports.ApiKeyRepository {
  readonly lookups: string[] = [];
  private readonly keys = new Map<string, ApiKeyRecord>();

  constructor(records: ApiKeyRecord[] = []) {
    for (const record of records) this.keys.set(record.keyHash, record);
  }

  async getByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    this.lookups.push(keyHash);
    return this.keys.get(keyHash);
  }

  async create(record: ApiKeyRecord): Promise<void> {
    this.keys.set(record.keyHash, record);
  }

  async revoke(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined> {
    const found = [...this.keys.values()].find((k) => k.keyId === keyId);
    if (!found) return undefined;
    const revoked: ApiKeyRecord = { ...found, status: 'REVOKED', revokedAt };
    this.keys.set(found.keyHash, revoked);
    return revoked;
  }

  async list(userId?: string): Promise<ApiKeyRecord[]> {
    return [...this.keys.values()].filter((k) => userId === undefined || k.userId === userId);
  }
}

/** A clock frozen at `iso`, counting how often it is read. */
export function fixedClock(iso: string): Ports.Clock & { reads: number } {
  const clock = {
    reads: 0,
    now: () => {
      clock.reads += 1;
      return new Date(iso);
    },
  };
  return clock;
}

/** A clock that moves `stepMs` forward on every reading, to expose code that reads it more than once. */
export function tickingClock(iso: string, stepMs: number): Ports.Clock & { reads: number } {
  const start = Date.parse(iso);
  const clock = {
    reads: 0,
    now: () => new Date(start + stepMs * clock.reads++),
  };
  return clock;
}

/**
 * A deterministic random source: call n of `bytes(size)` returns `size` bytes all equal to n (1, 2, ...)
 * unless a fixed pattern is given; `uuid()` returns uuid-like ids from a counter. Requested sizes are kept.
 */
export function sequenceRandom(pattern?: readonly number[]): Ports.RandomSource & {
  sizes: number[];
  uuids: string[];
} {
  let byteCalls = 0;
  const random = {
    sizes: [] as number[],
    uuids: [] as string[],
    bytes: (size: number) => {
      byteCalls += 1;
      random.sizes.push(size);
      const buffer = Buffer.alloc(size, byteCalls);
      if (pattern) for (let i = 0; i < size; i++) buffer[i] = pattern[i % pattern.length] ?? 0;
      return buffer;
    },
    uuid: () => {
      const id = `00000000-0000-4000-8000-${String(random.uuids.length + 1).padStart(12, '0')}`;
      random.uuids.push(id);
      return id;
    },
  };
  return random;
}

export const PUBLIC_BOARD: Board = {
  boardId: 'board-public',
  orgId: 'org-a',
  visibility: 'PUBLIC',
  name: 'P',
};
export const PRIVATE_BOARD: Board = {
  boardId: 'board-private',
  orgId: 'org-a',
  visibility: 'PRIVATE',
  name: 'Private',
};

/** An ACTIVE API key record for `keyHash`. */
export function apiKeyRecord(keyHash: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    keyHash,
    keyId: 'key_0123456789abcdef01234567',
    userId: 'owner-1',
    name: null,
    status: 'ACTIVE',
    createdAt: '2025-01-01T00:00:00.000Z',
    revokedAt: null,
    ...overrides,
  };
}
