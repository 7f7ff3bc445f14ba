import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { DynamoCutoffRecords } from '#lib/adapters/dynamodb/cutoff-records';
import { DynamoEventStore } from '#lib/adapters/dynamodb/events';
import { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import type { StoredSession } from '#lib/domain/session';
import { sessionEvent } from '#lib/domain/session-events';
import { listEvents } from '#lib/use-cases/list-events';
import { type ListCaller, listSessions } from '#lib/use-cases/list-sessions';
import { revokeUserSessions } from '#lib/use-cases/revoke-user-sessions';
import { storedSession } from '#test/support/fixtures';
import { useTablesBehindProxy } from '#test/support/tables-behind-proxy';

/**
 * What a request reads from DynamoDB, measured in the bytes of DynamoDB's answers (the fault proxy counts
 * them), on this run's engine (dynalite, or DynamoDB Local in `npm run test:dynamodb-local`): a page
 * reads in proportion to what it answers, not to what it passes over.
 */
const tables = useTablesBehindProxy();
let sessions: DynamoSessionRepository;
let deps: {
  sessions: DynamoSessionRepository;
  boards: DynamoBoardRepository;
  memberships: DynamoMembershipRepository;
  clock: { now: () => Date };
};
beforeAll(() => {
  const { db } = tables();
  sessions = new DynamoSessionRepository(db, LOCAL_TABLE_NAMES.sessions);
  deps = {
    sessions,
    boards: new DynamoBoardRepository(db, LOCAL_TABLE_NAMES.boards),
    memberships: new DynamoMembershipRepository(db, LOCAL_TABLE_NAMES.memberships),
    clock: { now: () => new Date('2026-03-01T00:00:00.000Z') },
  };
});
const CALLER: ListCaller = { userId: 'reader', keyId: 'key_1', apiKey: `esk_${'r'.repeat(43)}` };

/** About 20 KB of metadata: a session a listing should not read unless it answers with it. */
const LARGE = { notes: 'x'.repeat(20_000) };
const REVOKED = { revokedAt: '2026-02-20T00:00:00.000Z', revokedByUserId: 'someone', revokedByKeyId: null };

let counter = 0;
function session(boardId: string, minute: number, overrides: Partial<StoredSession> = {}): StoredSession {
  counter += 1;
  return storedSession({
    id: `b0b0b0b0-0000-4000-8000-${String(counter).padStart(12, '0')}`,
    tokenHash: hashCredential(`bounded-${counter}`),
    boardId,
    orgId: `org-of-${boardId}`,
    userId: 'customer-1',
    createdByUserId: 'reader',
    metadata: LARGE,
    createdAt: new Date(Date.UTC(2026, 1, 1, 0, minute)).toISOString(),
    expiresAt: '2026-12-31T00:00:00.000Z',
    ...overrides,
  });
}

/** The bytes DynamoDB answered while `run` ran, and those of its Query answers alone. */
async function bytesRead<T>(
  run: () => Promise<T>,
): Promise<{ result: T; bytes: number; queryBytes: number }> {
  const from = tables().proxy.requests.length;
  const result = await run();
  const answered = tables().proxy.requests.slice(from);
  const sum = (requests: typeof answered) => requests.reduce((total, r) => total + (r.answerBytes ?? 0), 0);
  return { result, bytes: sum(answered), queryBytes: sum(answered.filter((r) => r.operation === 'Query')) };
}

describe('a status-filtered list page on a real DynamoDB', () => {
  it('passes over 120 revoked sessions of 20 KB by their index entries and reads only the active one whole', async () => {
    const boardId = 'board-bounded-member';
    await deps.boards.put({ boardId, orgId: `org-of-${boardId}`, visibility: 'PRIVATE', name: null });
    await deps.memberships.add(`org-of-${boardId}`, CALLER.userId, '2026-01-01T00:00:00.000Z');
    const active = session(boardId, 0);
    await sessions.create(active);
    for (let i = 1; i <= 120; i++) await sessions.create(session(boardId, i, REVOKED));

    const { result, bytes } = await bytesRead(() =>
      listSessions(deps, CALLER, { boardId, status: 'active', limit: 10 }),
    );
    expect(result.data.map((s) => s.id)).toEqual([active.id]);
    expect(result.nextCursor).toBeNull();
    // The one session read whole (~20 KB) and 121 index entries of well under 1 KB each; reading the
    // 121 sessions whole would be 2.4 MB.
    expect(bytes).toBeLessThan(150_000);
  });

  it('reads only the state of the sessions it passes over where the scope’s index holds keys only', async () => {
    // The caller is no member of this board's organization: its sessions there are found through the
    // keys-only creatorBoard index.
    const boardId = 'board-bounded-outsider';
    await deps.boards.put({ boardId, orgId: `org-of-${boardId}`, visibility: 'PUBLIC', name: null });
    const active = session(boardId, 0);
    await sessions.create(active);
    for (let i = 1; i <= 60; i++) await sessions.create(session(boardId, i, REVOKED));

    const { result, bytes } = await bytesRead(() =>
      listSessions(deps, CALLER, { boardId, status: 'active', limit: 10 }),
    );
    expect(result.data.map((s) => s.id)).toEqual([active.id]);
    expect(bytes).toBeLessThan(100_000);
  });
});

describe('a revoke-all of a scope its earlier cut-off covers, on a real DynamoDB', () => {
  it('reads none of the 300 sessions it covered again, and counts the one created since', async () => {
    const boardId = 'board-bounded-revoke';
    await deps.boards.put({ boardId, orgId: `org-of-${boardId}`, visibility: 'PRIVATE', name: null });
    await deps.memberships.add(`org-of-${boardId}`, CALLER.userId, '2026-01-01T00:00:00.000Z');
    for (let i = 0; i < 300; i++) await sessions.create(session(boardId, i, { metadata: {} }));
    let now = new Date('2026-03-01T00:00:00.000Z');
    let draws = 0;
    const revokeDeps = {
      ...deps,
      cutoffs: new DynamoCutoffRecords(tables().db, LOCAL_TABLE_NAMES.sessions),
      clock: { now: () => now },
      random: { uuid: () => `cut-${++draws}`, bytes: (size: number) => Buffer.alloc(size) },
    };
    const first = await bytesRead(() => revokeUserSessions(revokeDeps, CALLER, { boardId }));
    expect(first.result).toEqual({ revoked: 300 });

    now = new Date('2026-03-01T00:05:00.000Z');
    const again = await bytesRead(() => revokeUserSessions(revokeDeps, CALLER, { boardId }));
    expect(again.result).toEqual({ revoked: 0 });
    // 16 empty shard queries, against the 300 index entries the first call read; what else it reads is
    // its own records (each in its copies), whatever the number of sessions.
    expect(again.queryBytes).toBeLessThan(first.queryBytes / 20);
    expect(again.bytes - again.queryBytes).toBeLessThan(32 * 1024);

    await sessions.create(session(boardId, 0, { createdAt: '2026-03-01T00:07:00.000Z', metadata: {} }));
    now = new Date('2026-03-01T00:10:00.000Z');
    expect(await revokeUserSessions(revokeDeps, CALLER, { boardId })).toEqual({ revoked: 1 });
  });
});

describe('an events page narrowed by type, on a real DynamoDB', () => {
  it('answers every event of the type in one page, reading only them: not the 150 others of 20 KB newer than them', async () => {
    const events = new DynamoEventStore(tables().db, LOCAL_TABLE_NAMES.events);
    const owner = 'events-reader';
    const made = Array.from({ length: 152 }, (_, i) =>
      session('board-events', i, { createdByUserId: owner }),
    );
    const actor = { type: 'api_key' as const, keyId: 'key_1' };
    // Two revocations, then 150 creations after them, each carrying its session's 20 KB of metadata.
    for (const [i, s] of made.slice(0, 2).entries()) {
      await events.record(
        sessionEvent({ ...s, ...REVOKED }, 'session.revoked', `2026-02-10T00:00:0${i}.000Z`, actor),
      );
    }
    for (const s of made.slice(2))
      await events.record(sessionEvent(s, 'session.created', s.createdAt, actor));
    const caller = { ...CALLER, userId: owner };

    const { result, bytes } = await bytesRead(() =>
      listEvents({ events }, caller, { type: 'session.revoked', limit: 10 }),
    );
    expect(result.data.map((event) => event.type)).toEqual(['session.revoked', 'session.revoked']);
    expect(result.nextCursor).toBeNull();
    // Two events of ~21 KB and two index entries; the 150 newer events would be 3 MB.
    expect(bytes).toBeLessThan(60_000);
  });
});
