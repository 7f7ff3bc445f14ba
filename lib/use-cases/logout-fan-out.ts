/**
 * The back-channel logouts of a revoke-all. A revoke-all writes cut-off records, never each session, so
 * no `session.revoked` is derived for the sessions it covers; instead every cut-off entry that appears in
 * a record (the stream consumer sees each) starts a fan-out job, which the delivery queue's worker runs
 * in bounded steps: each step reads one page of one part of the record's scope, queues one logout per
 * session that this very entry ended (and whose board has a logout target), and queues the next step.
 *
 * Exactly one (entry, record) pair ends a session (`firstCoveringCutoff`): a call that writes the same
 * entry into several records, two calls covering one session, each session still gets one logout. A
 * call's first and last writes are one entry moved later: its first job covers up to the first instant,
 * the move's job what lies between the two. A record stays small by merging its oldest cut-offs into
 * later ones; a job whose entry was merged away meanwhile still runs its own range (it carries its
 * instants), so a session is never skipped, though one may then be logged out by both jobs. Nothing here
 * is remembered between steps but the cursor in the next message, so a step that fails is run again
 * whole (its logouts are queued again, with the same `sid`), and a job started twice (a stream record
 * delivered again) runs twice: logouts may repeat, always naming the same session, and none is ever
 * skipped. Applications deduplicate by `sid` (docs/board-apps.md).
 *
 * Each step also raises its record's known expiry to the latest of the sessions it read: these are read
 * after the call, so they include the sessions its count could not see (created while it counted, or in
 * the moment the index had not shown yet), and the record must outlive them.
 */
import type { Board } from '#lib/domain/board';
import type { BoardAppUrlRule } from '#lib/domain/board-app';
import {
  type CutoffEntry,
  type CutoffFanOutStart,
  type CutoffRecord,
  type CutoffScope,
  coveredSince,
  coveringCutoff,
  cutoffScopeKey,
  cutoffScopesOf,
  epochSecondsOf,
  firstCoveringCutoff,
  parseCutoffScopeKey,
} from '#lib/domain/cutoffs';
import type { BoardRepository, CoveredScope, CoveredSessions } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import type { Logger } from '#lib/domain/telemetry';
import { type LogoutDelivery, logoutTargetOf } from './back-channel-logout';

/** One step of the logouts of one cut-off entry: its record, the entry, and where the step reads. */
export interface LogoutFanOut {
  /** The scope of the cut-off record the entry was written into. */
  scope: CutoffScope;
  entryId: string;
  /**
   * The instant the job covers up to: the entry's when the job started (absent on jobs queued before
   * jobs carried it: the entry's instant as the record holds it then).
   */
  at?: string;
  /** Where the job's range starts (a move's earlier instant), when later than the record says. */
  since?: string;
  /** The part (write shard or scan segment) this step reads; absent on the job's start, which starts every part. */
  part?: number;
  /** Where the part continues (the cursor of the page before); absent at the part's beginning. */
  after?: string;
}

/** True for a well-formed LogoutFanOut (a queue message's, say). */
export function isLogoutFanOut(value: unknown): value is LogoutFanOut {
  if (typeof value !== 'object' || value === null) return false;
  const { scope, entryId, at, since, part, after } = value as Record<string, unknown>;
  let scopeKey: string | undefined;
  try {
    scopeKey = cutoffScopeKey(scope as CutoffScope);
  } catch {
    return false;
  }
  return (
    typeof scopeKey === 'string' &&
    parseCutoffScopeKey(scopeKey) !== undefined &&
    typeof entryId === 'string' &&
    entryId !== '' &&
    (at === undefined || typeof at === 'string') &&
    (since === undefined || typeof since === 'string') &&
    (part === undefined || (Number.isInteger(part) && (part as number) >= 0)) &&
    (after === undefined || typeof after === 'string')
  );
}

/** What the fan-out queues: logouts, and its own next steps. */
export type FanOutWork = { logout: LogoutDelivery } | { fanOut: LogoutFanOut };

/** A work to queue, visible after `delaySeconds`. */
export interface DelayedWork {
  work: FanOutWork;
  delaySeconds: number;
}

/** Where the fan-out's works wait: the delivery queue on AWS (in batches of ten), timers locally. */
export interface FanOutQueue {
  send(works: readonly DelayedWork[]): Promise<void>;
}

/**
 * Index entries (or scanned items) one step reads: with the sessions read again (five `BatchGetItem`
 * calls of 100), their cut-off records and boards, and 50 batches of ten messages, a step takes well
 * under a second and never holds more than this many sessions.
 */
export const FAN_OUT_PAGE_SIZE = 500;

/**
 * How many logouts one part releases a second: each step spreads its logouts over whole seconds with
 * message delays, and queues its next step once the last is released. With 16 parts, one revoke-all
 * signs at most 320 logout tokens a second, a third of KMS's default rate for its elliptic-curve keys,
 * which the embed page's hand-offs share (docs/scale.md).
 */
export const LOGOUTS_PER_PART_PER_SECOND = 20;

export interface FanOutDeps {
  sessions: CoveredSessions;
  boards: BoardRepository;
  /** The stage's default board application (`BOARD_APP_URL`). */
  stageAppUrl: string | undefined;
  appUrlRule: BoardAppUrlRule;
  queue: FanOutQueue;
  logger: Logger;
}

/** What one step did: the logouts it queued, and whether its part goes on. */
export interface FanOutStep {
  logouts: number;
  continued: boolean;
}

/**
 * Runs one step. The job's start reads the record and queues a step for every part. A part's step reads
 * one page of sessions the entry may have ended (created after the latest earlier entry of the record
 * that covered them all, up to the entry), keeps those this entry and record ended (first covering
 * cut-off, not revoked on their own, not expired before it), and queues a logout for each whose board
 * has a logout target, spread over seconds, then the step after it. A record or entry that is gone ends
 * the job: there is nothing left to tell.
 */
export async function expandLogouts(deps: FanOutDeps, job: LogoutFanOut): Promise<FanOutStep> {
  const [record] = await deps.sessions.readCutoffs([job.scope]);
  const stored = record?.entries.find((candidate) => candidate.id === job.entryId);
  // An entry merged into a later one since the job started: its job still covers its own range.
  const entry =
    stored ??
    (job.at !== undefined ? { id: job.entryId, at: job.at, byUserId: '', byKeyId: null } : undefined);
  if (!record || !entry) {
    deps.logger.warn('cut-off entry not found; its logouts are not sent', { entryId: job.entryId });
    return { logouts: 0, continued: false };
  }
  const upTo = job.at ?? entry.at;
  if (job.part === undefined) {
    const parts = Array.from({ length: deps.sessions.coveredParts }, (_, part): DelayedWork => {
      return { work: { fanOut: { ...job, at: upTo, part } }, delaySeconds: 0 };
    });
    await deps.queue.send(parts);
    return { logouts: 0, continued: true };
  }

  const read = await coveredScopeOf(deps.boards, job.scope);
  if (!read) return { logouts: 0, continued: false };
  const since = latest(job.since, coveredSince(record, { ...entry, at: upTo }));
  const page = await deps.sessions.coveredPage(
    read,
    job.part,
    { ...(since !== undefined ? { since } : {}), upTo },
    { ...(job.after !== undefined ? { after: job.after } : {}), limit: FAN_OUT_PAGE_SIZE },
  );
  // Only what the record covers keeps it: a scanned or shared index page also holds sessions of other
  // tenants or creators, which its cut-offs never end.
  const covering = { ...record, entries: [...record.entries.filter((e) => e.id !== entry.id), entry] };
  await extendExpiry(
    deps,
    record,
    page.sessions.filter((session) => coveringCutoff(session, [covering]) !== undefined),
  );
  const ended = await endedByEntry(deps, page.sessions, entry, upTo, record);
  const logouts = await logoutsOf(deps, ended, entry);

  const works: DelayedWork[] = logouts.map((logout, i) => ({
    work: { logout },
    delaySeconds: Math.floor(i / LOGOUTS_PER_PART_PER_SECOND),
  }));
  if (page.next !== undefined) {
    // The next page's logouts come after this page's last, so the part keeps to its rate.
    works.push({
      work: { fanOut: { ...job, at: upTo, after: page.next } },
      delaySeconds: Math.ceil(logouts.length / LOGOUTS_PER_PART_PER_SECOND),
    });
  }
  if (works.length > 0) await deps.queue.send(works);
  return { logouts: logouts.length, continued: page.next !== undefined };
}

function latest(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

/**
 * Raises the record's known expiry to the latest expiry among `sessions` (read after the call), when the
 * record does not know one as late.
 */
async function extendExpiry(
  deps: FanOutDeps,
  record: CutoffRecord,
  sessions: readonly StoredSession[],
): Promise<void> {
  let latestExpiry = '';
  for (const session of sessions) if (session.expiresAt > latestExpiry) latestExpiry = session.expiresAt;
  if (latestExpiry === '') return;
  const until = epochSecondsOf(latestExpiry);
  if (record.coversUntil === undefined || record.coversUntil < until) {
    await deps.sessions.extendCutoffExpiry(record.scope, until);
  }
}

/**
 * Where a record's sessions are read. A board-and-user record has no index of its own: its sessions are
 * its board's organization's sessions of that user, narrowed to the board (sessions take their board's
 * organization, which never changes); a board that is gone has no application left to tell.
 */
async function coveredScopeOf(
  boards: BoardRepository,
  scope: CutoffScope,
): Promise<CoveredScope | undefined> {
  switch (scope.kind) {
    case 'tenantUser':
    case 'tenantBoardUser': {
      // A tenant's sessions: its organization's (on its boards), or its key owner's own.
      const board = scope.kind === 'tenantBoardUser' ? { boardId: scope.boardId } : {};
      return scope.tenant.kind === 'organization'
        ? { kind: 'orgUser', orgId: scope.tenant.id, userId: scope.userId, ...board }
        : { kind: 'creatorUser', creatorUserId: scope.tenant.id, userId: scope.userId, ...board };
    }
    case 'creatorUser':
      return { kind: 'creatorUser', creatorUserId: scope.creatorUserId, userId: scope.userId };
    case 'creatorBoardUser':
      return {
        kind: 'creatorUser',
        creatorUserId: scope.creatorUserId,
        userId: scope.userId,
        boardId: scope.boardId,
      };
    case 'orgUser':
      return { kind: 'orgUser', orgId: scope.orgId, userId: scope.userId };
    case 'boardUser': {
      const board = await boards.get(scope.boardId);
      return board && { kind: 'orgUser', orgId: board.orgId, userId: scope.userId, boardId: scope.boardId };
    }
    case 'board':
      return { kind: 'board', boardId: scope.boardId };
    case 'user':
      return { kind: 'allOfUser', userId: scope.userId };
    case 'stage':
      return { kind: 'stage' };
    case 'key':
      return { kind: 'key', keyId: scope.keyId };
    case 'orgCreator':
      return { kind: 'orgCreator', orgId: scope.orgId, creatorUserId: scope.creatorUserId };
  }
}

/**
 * The sessions this entry of this record ended, among those created up to `upTo`: its first covering
 * cut-off is this one (read with every record that could cover them; the entry put back into its record
 * when it was merged away since the job started), they were not revoked on their own (that revocation
 * sends its own logout, before or after), and they had not expired before the cut-off (the expiry sends
 * its own: the sweep takes a session whose cut-off is after its `expiresAt` as expired).
 */
async function endedByEntry(
  deps: FanOutDeps,
  sessions: readonly StoredSession[],
  entry: CutoffEntry,
  upTo: string,
  record: CutoffRecord,
): Promise<StoredSession[]> {
  const candidates = sessions.filter(
    (session) => session.revokedAt === null && session.createdAt <= upTo && session.expiresAt >= upTo,
  );
  if (candidates.length === 0) return [];
  const key = cutoffScopeKey(record.scope);
  // Every record that could cover one of them (the store reads each once, however many name it).
  const read = await deps.sessions.readCutoffs(candidates.flatMap(cutoffScopesOf));
  const own = read.find((candidate) => cutoffScopeKey(candidate.scope) === key) ?? {
    scope: record.scope,
    entries: [],
  };
  const records = [
    ...read.filter((candidate) => candidate !== own),
    own.entries.some((candidate) => candidate.id === entry.id)
      ? own
      : { ...own, entries: [...own.entries, entry] },
  ];
  return candidates.filter((session) => {
    const first = firstCoveringCutoff(session, records);
    return first?.entry.id === entry.id && cutoffScopeKey(first.scope) === key;
  });
}

/** One logout per session whose board has a logout target; each board read once per step. */
async function logoutsOf(
  deps: FanOutDeps,
  sessions: readonly StoredSession[],
  entry: CutoffEntry,
): Promise<LogoutDelivery[]> {
  const boards = new Map<string, Promise<Board | undefined>>();
  const logouts: LogoutDelivery[] = [];
  for (const session of sessions) {
    let board = boards.get(session.boardId);
    if (!board) {
      board = deps.boards.get(session.boardId);
      boards.set(session.boardId, board);
    }
    const found = await board;
    if (!found || !logoutTargetOf(found, deps.stageAppUrl, deps.appUrlRule)) continue;
    logouts.push({
      eventId: revokeAllLogoutId(entry.id),
      sessionId: session.id,
      boardId: session.boardId,
      userId: session.userId,
      tenant: session.tenant,
      attempt: 0,
    });
  }
  return logouts;
}

/** What a revoke-all's logouts name as their cause in the logs: the cut-off entry, not an event. */
export function revokeAllLogoutId(entryId: string): string {
  return `cutoff:${entryId}`;
}

/** Starts fan-outs by queuing each job's first step (the stream consumer's `fanOuts`). */
export function queuedFanOutStarts(queue: FanOutQueue): {
  start(jobs: readonly CutoffFanOutStart[]): Promise<void>;
} {
  return {
    start: (jobs) =>
      queue.send(
        jobs.map((job) => ({
          work: {
            fanOut: {
              scope: job.scope,
              entryId: job.entryId,
              at: job.at,
              ...(job.since !== undefined ? { since: job.since } : {}),
            },
          },
          delaySeconds: 0,
        })),
      ),
  };
}
