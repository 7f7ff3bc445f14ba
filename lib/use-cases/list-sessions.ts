import { createHash } from 'node:crypto';
import type { KeyOwner } from '#lib/domain/api-key';
import { ValidationError } from '#lib/domain/errors';
import type {
  BoardRepository,
  Clock,
  MembershipRepository,
  SessionPosition,
  SessionRef,
  SessionRepository,
} from '#lib/domain/ports';
import { type SessionStatus, type SessionView, sessionStatus, toSessionView } from '#lib/domain/session';
import { ScopeMerge, type SessionSelector, scopesFor } from './session-access';

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;
/**
 * Most sessions one page may pass over while looking for ones of the requested status. A page can then
 * hold fewer than `limit` sessions and still have a next cursor; it keeps one request's cost bounded
 * whatever the mix of statuses.
 */
export const MAX_EXAMINED_PER_PAGE = 1_000;

export interface ListSessionsQuery extends SessionSelector {
  status?: SessionStatus;
  limit: number;
  cursor?: string;
}

export interface SessionPage {
  data: SessionView[];
  nextCursor: string | null;
}

export interface ListSessionsDeps {
  sessions: SessionRepository;
  boards: BoardRepository;
  memberships: MembershipRepository;
  clock: Clock;
}

/**
 * One page of the sessions the caller may access, newest first. The cursor is the position of the last
 * session the page looked at, bound to the query and the caller: every page re-applies the access rules,
 * so no cursor can reach another tenant's sessions, and one made for another query is refused.
 */
export async function listSessions(
  deps: ListSessionsDeps,
  caller: KeyOwner,
  query: ListSessionsQuery,
): Promise<SessionPage> {
  const below = query.cursor === undefined ? undefined : decodeCursor(query.cursor, caller, query);
  const now = deps.clock.now();
  const scopes = await scopesFor(deps, caller, query);
  const merge = new ScopeMerge(deps.sessions, scopes, below, Math.min(MAX_LIST_LIMIT, query.limit + 1));

  const data: SessionView[] = [];
  let examined = 0;
  let last: SessionPosition | undefined;
  while (data.length < query.limit && examined < MAX_EXAMINED_PER_PAGE) {
    const refs: SessionRef[] = [];
    while (refs.length < query.limit - data.length) {
      const ref = await merge.next();
      if (!ref) break;
      refs.push(ref);
    }
    if (refs.length === 0) break;
    // The index only locates sessions; their current state (a revocation a moment ago) comes from the table.
    const byId = new Map((await deps.sessions.getMany(refs.map((ref) => ref.id))).map((s) => [s.id, s]));
    for (const ref of refs) {
      last = ref.position;
      const session = byId.get(ref.id);
      if (session && (query.status === undefined || sessionStatus(session, now) === query.status)) {
        data.push(toSessionView(session, now));
      }
    }
    examined += refs.length;
  }
  const more = last !== undefined && (await merge.hasMore());
  return { data, nextCursor: more && last !== undefined ? encodeCursor(last, caller, query) : null };
}

const CURSOR_VERSION = 1;
const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f-]{36}$/;
const INVALID_CURSOR = 'cursor is invalid or was issued for another query';

/** What a cursor is bound to: the caller and every selecting parameter (not the page size). */
function fingerprint(caller: KeyOwner, query: ListSessionsQuery): string {
  return createHash('sha256')
    .update(
      JSON.stringify([caller.userId, query.userId ?? null, query.boardId ?? null, query.status ?? null]),
    )
    .digest('base64url')
    .slice(0, 22);
}

/** An opaque cursor: base64url JSON of the position and the query's fingerprint. */
export function encodeCursor(position: SessionPosition, caller: KeyOwner, query: ListSessionsQuery): string {
  return Buffer.from(
    JSON.stringify({ v: CURSOR_VERSION, p: position, q: fingerprint(caller, query) }),
    'utf8',
  ).toString('base64url');
}

/** The position a cursor continues below; a malformed cursor, or one of another query or caller, is a 400. */
export function decodeCursor(cursor: string, caller: KeyOwner, query: ListSessionsQuery): SessionPosition {
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError(INVALID_CURSOR);
  }
  const { v, p, q, ...rest } = (decoded ?? {}) as { v?: unknown; p?: unknown; q?: unknown };
  if (
    typeof decoded !== 'object' ||
    Object.keys(rest).length > 0 ||
    v !== CURSOR_VERSION ||
    typeof p !== 'string' ||
    !POSITION.test(p) ||
    q !== fingerprint(caller, query)
  ) {
    throw new ValidationError(INVALID_CURSOR);
  }
  return p;
}
