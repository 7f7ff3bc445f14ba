import type { KeyOwner } from '#lib/domain/api-key';
import type {
  BoardRepository,
  Clock,
  MembershipRepository,
  SessionPosition,
  SessionRepository,
} from '#lib/domain/ports';
import {
  type OtherTenantSessionView,
  type SessionStatus,
  type SessionView,
  type StoredSession,
  sessionStatus,
} from '#lib/domain/session';
import { type SessionSelector, scopesFor, viewFor } from './session-access';
import { ScopeMerge, TenantFilter } from './session-streams';
import { type CursorFormat, decodeSignedCursor, encodeSignedCursor } from './signed-cursor';

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;
/**
 * Most sessions one page may pass over while looking for ones of the requested status. A page can then
 * hold fewer than `limit` sessions and still have a next cursor; it keeps one request's cost bounded
 * whatever the mix of statuses.
 */
export const MAX_EXAMINED_PER_PAGE = 1_000;
/**
 * Sessions read per batch while a filter passes over some of them: one index page and one BatchGetItem
 * each. A status filter may skip most sessions, so it reads such batches from the start. Otherwise a
 * batch is what the page still needs (plus one, to know whether more follow), until the tenant filter of
 * a `userId` selection drops one (sessions other tenants created for the same external user): from then
 * on, these batches.
 */
const FILTERED_BATCH = 100;
/**
 * Largest page body, in bytes of JSON. Lambda answers at most 6 MB, and metadata may be large, so a page
 * stops early (with a cursor) rather than fail.
 */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;

export interface ListSessionsQuery extends SessionSelector {
  status?: SessionStatus;
  limit: number;
  cursor?: string;
}

/** The caller of a listing: the key owner, and the API key its cursors are signed with. */
export type ListCaller = KeyOwner & { apiKey: string };

export interface SessionPage {
  /** Whole sessions, and the outline of those another tenant created on the caller's public boards. */
  data: Array<SessionView | OtherTenantSessionView>;
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
 * session the page looked at, signed for the caller's API key and this query: a cursor tampered with, or
 * used with another query or key, is refused; and every page re-applies the access rules anyway.
 */
export async function listSessions(
  deps: ListSessionsDeps,
  caller: ListCaller,
  query: ListSessionsQuery,
): Promise<SessionPage> {
  const below = query.cursor === undefined ? undefined : decodeCursor(query.cursor, caller, query);
  const now = deps.clock.now();
  const scopes = await scopesFor(deps, caller, query);
  let filtered = query.status !== undefined;
  const batch = (room: number) => (filtered ? FILTERED_BATCH : room);
  const merge = new ScopeMerge(deps.sessions, scopes, below, filtered ? FILTERED_BATCH : query.limit + 1);
  const tenant = new TenantFilter(deps.memberships, caller);

  const data: SessionPage['data'] = [];
  let bytes = 0;
  let examined = 0;
  let last: SessionPosition | undefined;
  let full = false;
  // Sessions read in the last batch but not looked at because the page filled up: more follow.
  let unread = 0;
  while (!full && examined < MAX_EXAMINED_PER_PAGE) {
    const refs = await merge.take(batch(query.limit - data.length));
    if (refs.length === 0) break;
    const admitted = query.userId === undefined ? undefined : await tenant.admitted(refs);
    // The index only locates sessions; their current state (a revocation a moment ago) comes from the table.
    const wanted: string[] = [];
    for (const [i, ref] of refs.entries()) if (admitted?.[i] !== false) wanted.push(ref.id);
    if (!filtered && wanted.length < refs.length) {
      filtered = true;
      merge.readAhead(FILTERED_BATCH);
    }
    // Revoked by a cut-off counts as revoked, for the status filter as for the view.
    const byId = new Map(
      (wanted.length > 0 ? await deps.sessions.applyCutoffs(await deps.sessions.getMany(wanted)) : []).map(
        (s) => [s.id, s],
      ),
    );
    const ownTenant = await ownTenantOf(tenant, byId);
    for (const [index, ref] of refs.entries()) {
      unread = refs.length - index;
      const session = byId.get(ref.id);
      if (session && (query.status === undefined || sessionStatus(session, now) === query.status)) {
        const view = viewFor(session, now, ownTenant.get(session.id) !== false);
        const size = viewBytesAtMost(view);
        if (data.length > 0 && bytes + size > MAX_PAGE_BYTES) {
          full = true;
          break;
        }
        data.push(view);
        bytes += size;
      }
      // Looked at: the next page starts below it, whether it matched or not.
      last = ref.position;
      examined += 1;
      unread -= 1;
      if (data.length === query.limit) {
        full = true;
        break;
      }
    }
  }
  const more = last !== undefined && (unread > 0 || (await merge.hasMore()));
  return { data, nextCursor: more && last !== undefined ? encodeCursor(last, caller, query) : null };
}

/**
 * Which of these sessions the caller's own tenant created (`TenantFilter.ownTenant`): most are decided at
 * once (the caller's own), others by one membership lookup per creator and listing.
 */
async function ownTenantOf(
  tenant: TenantFilter,
  sessions: ReadonlyMap<string, StoredSession>,
): Promise<Map<string, boolean>> {
  const verdicts = new Map<string, boolean>();
  const lookups: Promise<void>[] = [];
  for (const session of sessions.values()) {
    const own = tenant.ownTenant(session);
    if (typeof own === 'boolean') verdicts.set(session.id, own);
    else lookups.push(own.then((value) => void verdicts.set(session.id, value)));
  }
  if (lookups.length > 0) await Promise.all(lookups);
  return verdicts;
}

/** A view's JSON without its values: keys, quotes, colons, commas, braces, and the literals a value may be. */
const VIEW_FRAME_BYTES = 512;
/** The most bytes one UTF-16 unit of a string takes in JSON: a `\u001f`-style escape. */
const MAX_BYTES_PER_UNIT = 6;

/**
 * At least the bytes the view takes in the page's JSON, without writing it out: its metadata (the one
 * field of unbounded size) exactly, every other string at the longest escape. Stringifying each view
 * only to measure it was a sixth of what a page allocates.
 */
export function viewBytesAtMost(view: SessionView | OtherTenantSessionView): number {
  if ('createdByAnotherTenant' in view) return VIEW_FRAME_BYTES;
  const units =
    unitsOf(view.id) +
    unitsOf(view.boardId) +
    unitsOf(view.userId) +
    unitsOf(view.email) +
    unitsOf(view.firstName) +
    unitsOf(view.lastName) +
    unitsOf(view.avatarUrl) +
    unitsOf(view.plan) +
    unitsOf(view.expiresAt) +
    unitsOf(view.createdAt) +
    unitsOf(view.status) +
    unitsOf(view.revokedAt) +
    unitsOf(view.boundAt);
  return (
    VIEW_FRAME_BYTES + MAX_BYTES_PER_UNIT * units + Buffer.byteLength(JSON.stringify(view.metadata ?? null))
  );
}

const unitsOf = (value: string | null | undefined): number => (typeof value === 'string' ? value.length : 0);

const SESSIONS_CURSOR: CursorFormat<ListSessionsQuery> = {
  version: 2,
  position: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f-]{36}$/,
  salt: 'list-cursor',
  info: 'embed-session list cursor v2',
  boundTo: (caller, query) =>
    JSON.stringify([caller.userId, query.userId ?? null, query.boardId ?? null, query.status ?? null]),
};

/** An opaque cursor: base64url JSON of the position, then its signature. */
export function encodeCursor(
  position: SessionPosition,
  caller: ListCaller,
  query: ListSessionsQuery,
): string {
  return encodeSignedCursor(SESSIONS_CURSOR, position, caller, query);
}

/** The position a cursor continues below; any cursor the service did not issue for this query is a 400. */
export function decodeCursor(cursor: string, caller: ListCaller, query: ListSessionsQuery): SessionPosition {
  return decodeSignedCursor(SESSIONS_CURSOR, cursor, caller, query);
}
