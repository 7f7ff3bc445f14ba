import type { KeyOwner } from '#lib/domain/api-key';
import {
  type CutoffRecord,
  type CutoffScope,
  type CutoffSubject,
  coveringCutoff,
  cutoffScopeKey,
  cutoffScopesOf,
  tenantDecides,
  withCutoffs,
} from '#lib/domain/cutoffs';
import type {
  BoardRepository,
  Clock,
  IndexedState,
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
import { legacyTenant } from '#lib/domain/tenant';
import { type SessionSelector, scopesFor, viewFor } from './session-access';
import { type ScopedRef, ScopeMerge, TenantFilter, TenantGuess } from './session-streams';
import { type CursorFormat, decodeSignedCursor, encodeSignedCursor } from './signed-cursor';

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;
/**
 * Most index entries one page may pass over while looking for sessions of the requested status: a page
 * can then hold fewer than `limit` sessions and still have a next cursor. The status is decided from the
 * state the scope indexes project (and the cut-off records of the sessions' scopes), so passing over a
 * session costs its index entry (~0.35 KB), not the session.
 */
export const MAX_EXAMINED_PER_PAGE = 1_000;
/**
 * Most sessions whose state one page may read from the table, for a scope whose index holds keys only
 * (`creatorBoard`: the sessions the caller created on a board of another organization). Only their
 * state is read (a projection), but DynamoDB bills a read by the item's size, so this ceiling is lower.
 */
export const MAX_STATE_READS_PER_PAGE = 200;
/**
 * Sessions looked at per batch while a filter passes over some of them: one read of each scope's
 * partitions and the cut-off records of the batch's sessions. A status filter may skip most sessions,
 * so it reads such batches from the start. Otherwise a batch is what the page still needs (plus one, to
 * know whether more follow), until the tenant filter of a `userId` selection drops one (sessions other
 * tenants created for the same external user): from then on, these batches.
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
  const merge = new ScopeMerge(deps.sessions, scopes, below, filtered ? FILTERED_BATCH : query.limit + 1);
  const tenant = new TenantFilter(deps.memberships, caller);
  const cutoffs = new CutoffCache(deps.sessions, new TenantGuess(deps.memberships));

  const data: SessionPage['data'] = [];
  let bytes = 0;
  let examined = 0;
  let statesRead = 0;
  let last: SessionPosition | undefined;
  let full = false;
  // Sessions taken in the last batch but not looked at because the page filled up: more follow.
  let unread = 0;
  // Whether the scopes' index holds keys only, so the filter reads each session's state from the table.
  let keysOnly = false;
  while (!full && examined < MAX_EXAMINED_PER_PAGE && statesRead < MAX_STATE_READS_PER_PAGE) {
    const room = query.limit - data.length;
    const refs = await merge.take(
      Math.min(
        filtered ? FILTERED_BATCH : room,
        MAX_EXAMINED_PER_PAGE - examined,
        keysOnly ? MAX_STATE_READS_PER_PAGE - statesRead : Number.POSITIVE_INFINITY,
      ),
    );
    if (refs.length === 0) break;
    const admitted = query.userId === undefined ? undefined : await tenant.admitted(refs);
    const wanted = refs.filter((_, i) => admitted?.[i] !== false);
    if (!filtered && wanted.length < refs.length) {
      filtered = true;
      merge.readAhead(FILTERED_BATCH);
    }
    // With a status filter, only the sessions whose state (as the index holds it) has that status are
    // read whole; a session is never listed under a status its consistent read does not confirm.
    let matches = wanted;
    if (query.status !== undefined) {
      const states = await statesOf(deps.sessions, wanted);
      const fromTable = wanted.filter((ref) => ref.state === undefined).length;
      statesRead += fromTable;
      if (fromTable > 0) keysOnly = true;
      await cutoffs.load([...states.values()]);
      const statuses = await Promise.all(
        wanted.map((ref) => {
          const state = states.get(ref.id);
          return state !== undefined ? cutoffs.status(state, now) : undefined;
        }),
      );
      matches = wanted.filter((_, i) => statuses[i] === query.status);
    }
    // Whole sessions, read consistently (a revocation of a moment ago shows), as the page needs them.
    const reader = new WholeSessions(deps.sessions, cutoffs, tenant, matches);
    for (const [index, ref] of refs.entries()) {
      unread = refs.length - index;
      const read = await reader.get(ref.id, Math.max(query.limit - data.length, 1));
      const session = read?.session;
      if (session && (query.status === undefined || sessionStatus(session, now) === query.status)) {
        const view = viewFor(session, now, read?.own !== false);
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

/** What a session's status and its cut-off records follow from, with its position's creation time. */
type SessionState = IndexedState & Pick<StoredSession, 'createdAt'>;

/**
 * The state of each session, from its index entry where the index projects it, else read from the table
 * (consistently, the state alone) in one batch.
 */
async function statesOf(
  sessions: SessionRepository,
  refs: readonly ScopedRef[],
): Promise<Map<string, SessionState>> {
  const states = new Map<string, SessionState>();
  const missing: string[] = [];
  for (const ref of refs) {
    if (ref.state) states.set(ref.id, { ...ref.state, createdAt: createdAtOf(ref.position) });
    else missing.push(ref.id);
  }
  if (missing.length > 0) {
    for (const { id, ...state } of await sessions.statesOf(missing)) states.set(id, state);
  }
  return states;
}

/** `createdAt#id`: ISO times hold no `#`. */
function createdAtOf(position: SessionPosition): string {
  return position.slice(0, position.indexOf('#'));
}

/**
 * The cut-off records of the scopes a page's sessions belong to, each read once per page (a page names
 * the same few scopes many times over), consistently.
 */
class CutoffCache {
  /** Scope key -> its record, or null when the scope has none. */
  private readonly records = new Map<string, CutoffRecord | null>();

  constructor(
    private readonly sessions: SessionRepository,
    /** Whose a session known from its index entry alone is, where a tenant record decides its status. */
    private readonly tenants: TenantGuess,
  ) {}

  /** Reads the records of these sessions' scopes not read yet, in one batch. */
  async load(subjects: readonly CutoffSubject[]): Promise<void> {
    const wanted = new Map<string, CutoffScope>();
    for (const subject of subjects) {
      for (const scope of cutoffScopesOf(subject)) {
        const key = cutoffScopeKey(scope);
        if (!this.records.has(key)) wanted.set(key, scope);
      }
    }
    if (wanted.size === 0) return;
    for (const key of wanted.keys()) this.records.set(key, null);
    for (const record of await this.sessions.readCutoffs([...wanted.values()])) {
      this.records.set(cutoffScopeKey(record.scope), record);
    }
  }

  /** The records (loaded before) that could cover this session. */
  of(subject: CutoffSubject): CutoffRecord[] {
    const found: CutoffRecord[] = [];
    for (const scope of cutoffScopesOf(subject)) {
      const record = this.records.get(cutoffScopeKey(scope));
      if (record) found.push(record);
    }
    return found;
  }

  /**
   * The status of a session in this state, revoked also when a cut-off covers it. The index holds no
   * tenant: where a tenant record could decide, the session's tenant is looked up (`TenantGuess`), and
   * the status is checked again on the whole session before it is listed.
   */
  async status(state: SessionState, now: Date): Promise<SessionStatus> {
    const records = this.of(state);
    // Whatever its tenant, the records say the same unless a tenant record could cover it.
    const tenant = tenantDecides(state, records) ? await this.tenants.of(state) : legacyTenant(state.orgId);
    const cutoff = coveringCutoff({ ...state, tenant }, records);
    return sessionStatus(
      { expiresAt: state.expiresAt, revokedAt: state.revokedAt ?? cutoff?.at ?? null },
      now,
    );
  }
}

/**
 * Reads whole sessions (consistently, their cut-offs applied) only when they are looked at: the next
 * `chunk` of `ids` at a time, in their order, so a page that fills up early reads no session past it.
 */
class WholeSessions {
  private readonly read = new Map<string, { session: StoredSession; own: boolean }>();
  private readonly order: string[];
  private next = 0;

  constructor(
    private readonly sessions: SessionRepository,
    private readonly cutoffs: CutoffCache,
    private readonly tenant: TenantFilter,
    refs: readonly ScopedRef[],
  ) {
    this.order = refs.map((ref) => ref.id);
  }

  /**
   * The session, when it is one of `refs` and exists, and whether the caller's own tenant created it;
   * reads the next chunk when it is not read yet.
   */
  async get(id: string, chunk: number): Promise<{ session: StoredSession; own: boolean } | undefined> {
    const at = this.order.indexOf(id, this.next);
    if (at === -1) return this.read.get(id);
    const ids = this.order.slice(this.next, Math.max(at + 1, this.next + chunk));
    this.next += ids.length;
    const sessions = await this.sessions.getMany(ids);
    await this.cutoffs.load(sessions);
    const byId = new Map(
      sessions.map((session) => [session.id, withCutoffs(session, this.cutoffs.of(session))]),
    );
    const own = await ownTenantOf(this.tenant, byId);
    for (const [sessionId, session] of byId)
      this.read.set(sessionId, { session, own: own.get(sessionId) !== false });
    return this.read.get(id);
  }
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
