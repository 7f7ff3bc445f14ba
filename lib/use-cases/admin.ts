import {
  type ApiKeyRecord,
  isRateLimitValue,
  KEY_EXPIRY_DAYS_MAX,
  RATE_LIMIT_BOUNDS,
  type RateLimit,
} from '#lib/domain/api-key';
import { type Board, PUBLIC_VISIBILITY } from '#lib/domain/board';
import { type BoardAppUrlRule, boardAppUrlProblem } from '#lib/domain/board-app';
import { hashCredential, newApiKey } from '#lib/domain/credentials';
import {
  CUTOFF_UNSEEN_LIFETIME_SECONDS,
  type CutoffEntry,
  type CutoffScope,
  type CutoffWrite,
  coveringCutoff,
  cutoffScopeKey,
  cutoffScopesOf,
  epochSecondsOf,
} from '#lib/domain/cutoffs';
import {
  type DestinationPolicy,
  destinationRefusal,
  isLoopbackHost,
  PUBLIC_DESTINATIONS,
} from '#lib/domain/destinations';
import { isEmbedOrigin } from '#lib/domain/embed-origins';
import { ApiKeyNotFoundError, BoardNotFoundError, ValidationError } from '#lib/domain/errors';
import { MAX_ID_LENGTH } from '#lib/domain/ids';
import { isReservedUserId, LEGACY_OPERATOR } from '#lib/domain/operators';
import type {
  ApiKeyRepository,
  BoardRepository,
  Clock,
  CutoffCopying,
  CutoffRecordStore,
  KeyThrottling,
  MembershipRepository,
  RandomSource,
  SessionRepository,
} from '#lib/domain/ports';
import {
  isSessionId,
  type SessionStatus,
  type SessionView,
  type StoredSession,
  sessionStatus,
  toSessionView,
} from '#lib/domain/session';

/** Visibilities operators may set; the API treats anything but PUBLIC as private. */
export const BOARD_VISIBILITIES = [PUBLIC_VISIBILITY, 'PRIVATE'] as const;

/**
 * What operators see of an API key: never the key, never its hash; its expiry and last use always, null
 * when it has none.
 */
export type ApiKeySummary = Omit<ApiKeyRecord, 'keyHash' | 'expiresAt' | 'lastUsedAt'> & {
  expiresAt: string | null;
  lastUsedAt: string | null;
};

/**
 * Who makes an operator's change, recorded on what it changes: an IAM principal's ARN through the
 * provisioning API, `cli:<user>` through the admin CLI (lib/domain/operators.ts).
 */
export interface OperatorDeps {
  actor: string;
  clock: Clock;
}

/** What an idempotent write did: a state already as asked writes nothing. */
export type WriteOutcome = 'created' | 'updated' | 'unchanged';

/**
/**
 * A board as operators give it. On an existing board every field left out keeps its value: `orgId` and
 * `visibility` (required for a new board), `name` (null clears it), `embedOrigins` (a list replaces the
 * board's own; an empty list or null removes it so the stage default applies) and `appUrl` (a URL
 * replaces the board's own; `""` or null removes it) and `logoutUrl` (the same rule as `appUrl`: where the
 * application receives back-channel logouts, which the service POSTs, so its host must also be on the
 * public internet: `deps.destinations`, public hosts only unless told otherwise).
 */
export type BoardInput = Pick<Board, 'boardId'> &
  Partial<Pick<Board, 'orgId' | 'visibility' | 'name'>> & {
    embedOrigins?: readonly string[] | null;
    appUrl?: string | null;
    logoutUrl?: string | null;
  };

/** Off the local runtime an app URL must be https; `createBoard` applies this rule unless told otherwise. */
export const REMOTE_APP_URL_RULE: BoardAppUrlRule = { allowLoopbackHttp: false };

/**
 * Why the service may not POST a board's logouts to `logoutUrl` (an absolute URL already): its host must
 * be on the public internet, as a webhook endpoint's. The app URL needs no such check: the browser, not the
 * service, posts to it.
 */
function logoutDestinationProblem(logoutUrl: string, destinations: DestinationPolicy): string | undefined {
  const url = new URL(logoutUrl);
  const refused = destinationRefusal(url, destinations);
  if (refused === undefined) return undefined;
  const hint =
    destinations.loopbackHint && isLoopbackHost(url.hostname) ? ` (${destinations.loopbackHint})` : '';
  return `a logout URL must point to the public internet: ${refused}${hint}`;
}

/**
 * Creates a board, or updates the one with the same id (how operators change a visibility or name):
 * what the input leaves out keeps its value. A board never moves to another organization: its sessions
 * recorded the owner their access follows.
 */
export async function createBoard(
  deps: {
    boards: BoardRepository;
    appUrlRule?: BoardAppUrlRule;
    destinations?: DestinationPolicy;
  } & Partial<OperatorDeps>,
  input: BoardInput,
): Promise<Board> {
  return (await applyBoard(deps, input)).board;
}

/**
 * `createBoard`, telling what it did: a board already in the state asked for is not written again (a
 * repeated provisioning call or import line is a no-op); a write records who made it and when.
 */
export async function applyBoard(
  deps: {
    boards: BoardRepository;
    appUrlRule?: BoardAppUrlRule;
    destinations?: DestinationPolicy;
  } & Partial<OperatorDeps>,
  input: BoardInput,
): Promise<{ board: Board; outcome: WriteOutcome }> {
  const { embedOrigins: given, appUrl: givenAppUrl, logoutUrl: givenLogoutUrl } = input;
  requireText('board', input.boardId);
  const existing = await deps.boards.get(input.boardId);
  if (!existing && (input.orgId === undefined || input.visibility === undefined))
    throw new ValidationError(
      `board "${input.boardId}" does not exist yet: a new board needs --org and --visibility`,
    );
  const fields: Omit<Board, 'embedOrigins' | 'appUrl' | 'logoutUrl'> = {
    boardId: input.boardId,
    orgId: input.orgId ?? existing?.orgId ?? '',
    visibility: input.visibility ?? existing?.visibility ?? '',
    name: input.name === undefined ? (existing?.name ?? null) : input.name,
  };
  requireText('org', fields.orgId);
  if (!(BOARD_VISIBILITIES as readonly string[]).includes(fields.visibility)) {
    throw new ValidationError(`visibility must be one of ${BOARD_VISIBILITIES.join(', ')}`);
  }
  const invalid = (given ?? []).filter((origin) => !isEmbedOrigin(origin));
  if (invalid.length > 0) {
    throw new ValidationError(
      `embed origins must be origins like "https://app.example.com" or "https://*.example.com", got ${invalid
        .map((origin) => `"${origin}"`)
        .join(', ')}`,
    );
  }
  const appUrlProblem = givenAppUrl
    ? boardAppUrlProblem(givenAppUrl, deps.appUrlRule ?? REMOTE_APP_URL_RULE)
    : undefined;
  if (appUrlProblem !== undefined) throw new ValidationError(appUrlProblem);
  const logoutUrlProblem = givenLogoutUrl
    ? (boardAppUrlProblem(givenLogoutUrl, deps.appUrlRule ?? REMOTE_APP_URL_RULE)?.replace(
        /\ban app URL\b/,
        'a logout URL',
      ) ?? logoutDestinationProblem(givenLogoutUrl, deps.destinations ?? PUBLIC_DESTINATIONS))
    : undefined;
  if (logoutUrlProblem !== undefined) throw new ValidationError(logoutUrlProblem);
  // Replacing a board without naming its origins must not quietly widen who may frame it, nor without
  // naming its application quietly send its users back to the built-in page.
  const embedOrigins = given === undefined ? existing?.embedOrigins : [...new Set(given ?? [])];
  const appUrl = givenAppUrl === undefined ? existing?.appUrl : givenAppUrl || undefined;
  const logoutUrl = givenLogoutUrl === undefined ? existing?.logoutUrl : givenLogoutUrl || undefined;
  const board: Board = {
    ...fields,
    ...(embedOrigins?.length ? { embedOrigins } : {}),
    ...(appUrl ? { appUrl } : {}),
    ...(logoutUrl ? { logoutUrl } : {}),
  };
  if (existing && existing.orgId === board.orgId && sameBoardState(existing, board)) {
    return { board: existing, outcome: 'unchanged' };
  }
  const audited: Board = {
    ...board,
    ...(deps.actor !== undefined && deps.clock
      ? { updatedBy: deps.actor, updatedAt: deps.clock.now().toISOString() }
      : {}),
  };
  if (!(await deps.boards.put(audited))) {
    throw new ValidationError(
      `board "${board.boardId}" belongs to another organization; a board never changes organization`,
    );
  }
  return { board: audited, outcome: existing ? 'updated' : 'created' };
}

/** Whether two boards hold the same state (who changed them last aside). */
function sameBoardState(a: Board, b: Board): boolean {
  const origins = (board: Board) => JSON.stringify([...(board.embedOrigins ?? [])].sort());
  return (
    a.orgId === b.orgId &&
    a.visibility === b.visibility &&
    a.name === b.name &&
    origins(a) === origins(b) &&
    (a.appUrl ?? null) === (b.appUrl ?? null) &&
    (a.logoutUrl ?? null) === (b.logoutUrl ?? null)
  );
}

/**
 * Deletes a board of `orgId`, and ends its sessions with one cut-off written first: every link of the
 * board is refused from its next load (the board is gone, and a board made again under the same id
 * does not bring its old sessions back). A board that is not the organization's is not found.
 */
export async function deleteBoard(
  deps: { boards: BoardRepository; cutoffs: CutoffRecordStore; random: RandomSource } & OperatorDeps,
  orgId: string,
  boardId: string,
): Promise<{ boardId: string; orgId: string; deleted: true; sessionsEndedAt: string }> {
  requireText('org', orgId);
  requireText('board', boardId);
  const board = await deps.boards.get(boardId);
  if (!board || board.orgId !== orgId) throw new BoardNotFoundError(boardId);
  const at = deps.clock.now().toISOString();
  // The cut-off first: a delete that fails after it has ended the sessions, and its retry converges.
  await deps.cutoffs.writeCutoff([{ kind: 'board', boardId }], operatorCutoff(deps.random, at, deps.actor));
  if (!(await deps.boards.delete(boardId, orgId))) throw new BoardNotFoundError(boardId);
  return { boardId, orgId, deleted: true, sessionsEndedAt: at };
}

/**
 * The one write of an operator's cut-off that ends a deleted board's, a revoked key's or a removed
 * member's sessions: one entry whatever the number of sessions, merged into its record like every other
 * (at most CUTOFF_ENTRIES_MAX entries, conditional on the record's revision). It reads no session, so it
 * counts the default lifetime as what it covers; the logouts' pass, which reads every session it ended
 * (lib/use-cases/logout-fan-out.ts), raises the record's expiry to the latest of theirs, so the record expires
 * once nothing it covers can still be alive, and not before.
 */
function operatorCutoff(random: RandomSource, at: string, actor: string): CutoffWrite {
  return {
    entry: {
      id: random.uuid(),
      at,
      byUserId: actor,
      byKeyId: null,
      until: epochSecondsOf(at) + CUTOFF_UNSEEN_LIFETIME_SECONDS,
    },
    now: at,
  };
}

/**
 * Makes a user a member of an organization (idempotent: a member already is not written again, so the
 * membership keeps when and by whom it was added).
 */
export async function addMember(
  deps: { memberships: MembershipRepository; clock: Clock; actor?: string },
  orgId: string,
  userId: string,
): Promise<{ orgId: string; userId: string; member: true; outcome: WriteOutcome }> {
  requireText('org', orgId);
  requireUserId(userId);
  if (await deps.memberships.isMember(orgId, userId))
    return { orgId, userId, member: true, outcome: 'unchanged' };
  await deps.memberships.add(orgId, userId, deps.clock.now().toISOString(), deps.actor);
  return { orgId, userId, member: true, outcome: 'created' };
}

/** The members of an organization, by user id. */
export async function listMembers(deps: { memberships: MembershipRepository }, orgId: string) {
  requireText('org', orgId);
  return { orgId, members: await deps.memberships.membersOf(orgId) };
}

/**
 * Removes a membership; `removed` says whether there was one. With `endSessions`, also ends every session
 * the member created on the organization's boards, with one cut-off (their links are refused from the
 * next load; the member's sessions elsewhere are untouched). Ending is written whether or not the
 * membership was still there, so a retry, or a second call after the removal, still ends them.
 */
export async function removeMember(
  deps: {
    memberships: MembershipRepository;
    cutoffs?: CutoffRecordStore;
    random?: RandomSource;
  } & Partial<OperatorDeps>,
  orgId: string,
  userId: string,
  options: { endSessions?: boolean } = {},
): Promise<{ orgId: string; userId: string; removed: boolean; sessionsEndedAt?: string }> {
  requireText('org', orgId);
  requireText('user', userId);
  let sessionsEndedAt: string | undefined;
  if (options.endSessions) {
    const { cutoffs, random, clock, actor } = deps;
    if (!cutoffs || !random || !clock || actor === undefined)
      throw new Error('ending sessions needs the sessions table');
    sessionsEndedAt = clock.now().toISOString();
    await cutoffs.writeCutoff(
      [{ kind: 'orgCreator', orgId, creatorUserId: userId }],
      operatorCutoff(random, sessionsEndedAt, actor),
    );
  }
  const removed = await deps.memberships.remove(orgId, userId);
  return { orgId, userId, removed, ...(sessionsEndedAt !== undefined ? { sessionsEndedAt } : {}) };
}

/**
 * Throttling that needs nothing beyond the key record: the local gateway reads a key's limits through the
 * authorizer, so against the local runtime there is nothing else to keep in step.
 */
export const RECORD_ONLY_THROTTLING: KeyThrottling = {
  register: async () => undefined,
  apply: async () => undefined,
  remove: async () => undefined,
};

/**
 * Issues an API key. The returned `apiKey` is the only time the key exists outside its owner. The platform's
 * throttling learns the key first: should that fail, no record exists whose key nobody was ever shown.
 */
export async function createApiKey(
  deps: {
    apiKeys: ApiKeyRepository;
    throttling: KeyThrottling;
    clock: Clock;
    random: RandomSource;
    actor?: string;
  },
  userId: string,
  name: string | null,
  options: { expiresInDays?: number } = {},
): Promise<{ apiKey: string; keyId: string; userId: string; expiresAt: string | null }> {
  requireUserId(userId);
  const { expiresInDays } = options;
  if (
    expiresInDays !== undefined &&
    !(Number.isInteger(expiresInDays) && expiresInDays >= 1 && expiresInDays <= KEY_EXPIRY_DAYS_MAX)
  ) {
    throw new ValidationError(
      `expiresInDays must be a whole number of days from 1 to ${KEY_EXPIRY_DAYS_MAX}`,
    );
  }
  const { apiKey, keyId } = newApiKey(deps.random);
  const now = deps.clock.now();
  const expiresAt =
    expiresInDays !== undefined ? new Date(now.getTime() + expiresInDays * 86_400_000).toISOString() : null;
  await deps.throttling.register(keyId);
  await deps.apiKeys.create({
    keyHash: hashCredential(apiKey),
    keyId,
    userId,
    name,
    status: 'ACTIVE',
    createdAt: now.toISOString(),
    revokedAt: null,
    limits: null,
    // Registered just above: the authorizer never needs to register it (see authorize-api-key.ts).
    usagePlanAt: now.toISOString(),
    ...(expiresAt !== null ? { expiresAt } : {}),
    ...(deps.actor !== undefined ? { createdBy: deps.actor } : {}),
  });
  return { apiKey, keyId, userId, expiresAt };
}

/**
 * Revokes a key by id, then removes it from the platform's throttling; throws when there is no such key.
 * Revoking again repeats the removal, so a command interrupted in between can be run again.
 */
export async function revokeApiKey(
  deps: {
    apiKeys: ApiKeyRepository;
    throttling: KeyThrottling;
    clock: Clock;
    actor?: string;
    cutoffs?: CutoffRecordStore;
    random?: RandomSource;
  },
  keyId: string,
  options: { endSessions?: boolean } = {},
): Promise<ApiKeySummary & { sessionsEndedAt?: string }> {
  requireText('key-id', keyId);
  const now = deps.clock.now().toISOString();
  const record = await deps.apiKeys.revoke(keyId, now, deps.actor);
  if (!record) throw new ApiKeyNotFoundError(keyId);
  await deps.throttling.remove(keyId);
  if (!options.endSessions) return summarize(record);
  // After the revocation: every session the key could still create through an authorization cached
  // before it was created at or before this cut-off, unless the cache outlives the command (see
  // docs/operations.md, "A leaked API key").
  const { cutoffs, random, actor } = deps;
  if (!cutoffs || !random || actor === undefined) throw new Error('ending sessions needs the sessions table');
  const sessionsEndedAt = deps.clock.now().toISOString();
  await cutoffs.writeCutoff([{ kind: 'key', keyId }], operatorCutoff(random, sessionsEndedAt, actor));
  return { ...summarize(record), sessionsEndedAt };
}

/**
 * Gives an active key its own rate limit, or back the defaults with null. The key record is written first
 * (the source of truth, and what the authorizer reads), then the platform is brought in step; a failure in
 * between is mended by running the command again.
 */
export async function setRateLimit(
  deps: { apiKeys: ApiKeyRepository; throttling: KeyThrottling },
  keyId: string,
  limits: RateLimit | null,
): Promise<ApiKeySummary> {
  requireText('key-id', keyId);
  if (limits) {
    for (const [part, option] of [
      ['rate', '--rate'],
      ['burst', '--burst'],
    ] as const) {
      if (!isRateLimitValue(part, limits[part])) {
        const { min, max } = RATE_LIMIT_BOUNDS[part];
        throw new ValidationError(`${option} must be an integer from ${min} to ${max}`);
      }
    }
  }
  const record = await deps.apiKeys.setLimits(keyId, limits);
  if (!record) throw new ValidationError(`No API key has id "${keyId}"`);
  if (record.status !== 'ACTIVE') throw new ValidationError(`API key "${keyId}" is revoked`);
  await deps.throttling.apply(keyId, record.limits);
  return summarize(record);
}

/**
 * Brings the platform's throttling in step with every key record: active keys under their own limits or
 * the defaults, revoked keys removed. For a stack deployed before keys were throttled, and to mend drift.
 * One key at a time, so the platform's own control-plane limits are not hammered. Each active key is
 * recorded as registered, so the authorizer does not register it again at its next use.
 */
export async function syncRateLimits(deps: {
  apiKeys: ApiKeyRepository;
  throttling: KeyThrottling;
  clock: Clock;
}): Promise<{ active: number; revoked: number }> {
  const counts = { active: 0, revoked: 0 };
  for (const record of await deps.apiKeys.list()) {
    if (record.status === 'ACTIVE') {
      await deps.throttling.apply(record.keyId, record.limits);
      if (record.usagePlanAt === undefined)
        await deps.apiKeys.recordUsagePlan(record.keyHash, deps.clock.now().toISOString());
      counts.active += 1;
    } else {
      await deps.throttling.remove(record.keyId);
      counts.revoked += 1;
    }
  }
  return counts;
}

/** Lists every board, or one organization's, sorted by id. */
export async function listBoards(deps: { boards: BoardRepository }, orgId?: string): Promise<Board[]> {
  if (orgId === undefined) return deps.boards.list();
  requireText('org', orgId);
  return deps.boards.listOfOrg(orgId);
}

/** Lists keys (optionally of one user) without keys or hashes. */
export async function listApiKeys(
  deps: { apiKeys: ApiKeyRepository },
  userId?: string,
): Promise<ApiKeySummary[]> {
  // An empty --user must not silently mean "every user".
  if (userId !== undefined) requireText('user', userId);
  return (await deps.apiKeys.list(userId)).map(summarize);
}

/** A key as operators see it: no hash, and not the internal record of its usage plan registration. */
function summarize({
  keyHash: _hash,
  usagePlanAt: _registered,
  expiresAt,
  lastUsedAt,
  ...rest
}: ApiKeyRecord): ApiKeySummary {
  return { ...rest, expiresAt: expiresAt ?? null, lastUsedAt: lastUsedAt ?? null };
}

/** A key owner's id: the API's rule, and none an operator's identity could be mistaken for. */
function requireUserId(userId: string): void {
  requireText('user', userId);
  if (isReservedUserId(userId)) {
    throw new ValidationError('--user must not start with "arn:" or "cli:": those name operators');
  }
}

/** Ids follow the API's rule, so the CLI never records a board or member the API could not address. */
function requireText(option: string, value: string): void {
  if (value.trim() === '') throw new ValidationError(`--${option} must not be empty`);
  if ([...value].length > MAX_ID_LENGTH) {
    throw new ValidationError(`--${option} must be at most ${MAX_ID_LENGTH} characters`);
  }
}

// Sessions, as operators see and revoke them: every tenant's, unscoped.

/** The name operators' revocations were recorded under before each was named (`OperateSessionsDeps.actor`). */
export const OPERATOR = LEGACY_OPERATOR;

/** What operators see of a session: all but the token hash, including who created and revoked it. */
export type OperatorSessionView = SessionView &
  Pick<StoredSession, 'orgId' | 'createdByUserId' | 'createdByKeyId' | 'revokedByUserId' | 'revokedByKeyId'>;

export interface OperateSessionsDeps {
  sessions: SessionRepository;
  /** Where the stage's cut-off records are written. */
  cutoffs: CutoffRecordStore;
  clock: Clock;
  /** Draws each stage cut-off's id. */
  random: RandomSource;
  /** Who revokes: recorded on each revocation and cut-off (`admin-cli` when not named). */
  actor?: string;
}

export interface OperatorSessionQuery {
  userId?: string;
  boardId?: string;
  status?: SessionStatus;
  limit?: number;
}

/** One session by id, unscoped (operators see every tenant's); an unknown id is a usage error. */
export async function inspectSession(deps: OperateSessionsDeps, id: string): Promise<OperatorSessionView> {
  const session = isSessionId(id) ? await deps.sessions.get(id) : undefined;
  if (!session) throw new ValidationError(`No session has id "${id}"`);
  const [covered] = await deps.sessions.applyCutoffs([session]);
  return operatorView(covered ?? session, deps.clock.now());
}

/**
 * The sessions of a user (a table scan: operators only) or of a board (its index), newest first,
 * optionally of one status, at most `limit`.
 */
export async function findSessions(
  deps: OperateSessionsDeps,
  query: OperatorSessionQuery,
): Promise<OperatorSessionView[]> {
  const now = deps.clock.now();
  return (await deps.sessions.applyCutoffs(await selected(deps, query)))
    .filter((session) => query.status === undefined || sessionStatus(session, now) === query.status)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
    .slice(0, query.limit ?? Number.POSITIVE_INFINITY)
    .map((session) => operatorView(session, now));
}

/** Revokes one session, recorded as the operator's; idempotent like the API's revoke. */
export async function revokeSessionAsOperator(
  deps: OperateSessionsDeps,
  id: string,
): Promise<OperatorSessionView> {
  const now = deps.clock.now();
  const revoked = isSessionId(id)
    ? await deps.sessions.revoke(id, {
        revokedAt: now.toISOString(),
        byUserId: deps.actor ?? OPERATOR,
        byKeyId: null,
      })
    : undefined;
  if (!revoked) throw new ValidationError(`No session has id "${id}"`);
  const [covered] = await deps.sessions.applyCutoffs([revoked]);
  return operatorView(covered ?? revoked, now);
}

/**
 * Revokes, with one cut-off, every session of the stage created at or before `before` (not in the
 * future), or only those on one board, or only those of one external user id (every tenant's). Counts
 * the sessions of that selection that were active at the cut-off and not covered by an earlier one.
 */
export async function revokeAllAsOperator(
  deps: OperateSessionsDeps,
  command: { before: string; boardId?: string; userId?: string },
): Promise<{ revoked: number; cutoff: string; scope: string }> {
  const { boardId, userId } = command;
  if (boardId !== undefined && userId !== undefined) {
    throw new ValidationError('--board and --user cannot be combined: give one of them, or neither');
  }
  const before = new Date(command.before);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(command.before) || Number.isNaN(before.getTime())) {
    throw new ValidationError('--before must be an ISO 8601 time, such as 2026-01-01T00:00:00Z');
  }
  const now = deps.clock.now();
  if (before.getTime() > now.getTime()) throw new ValidationError('--before must not be in the future');
  const at = before.toISOString();

  const scope: CutoffScope =
    boardId !== undefined
      ? { kind: 'board', boardId }
      : userId !== undefined
        ? { kind: 'user', userId }
        : { kind: 'stage' };
  const sessions =
    boardId !== undefined || userId !== undefined
      ? await selected(deps, command)
      : await deps.sessions.listAll();
  const earlier = await deps.sessions.applyCutoffs(sessions);
  let revoked = 0;
  // The record lives as long as the sessions it covers: those read here, and at least the default
  // lifetime for one the board's index did not show yet.
  let until = epochSecondsOf(at) + CUTOFF_UNSEEN_LIFETIME_SECONDS;
  for (const session of earlier) {
    if (session.createdAt > at) continue;
    if (sessionStatus(session, before) === 'active') revoked += 1;
    until = Math.max(until, epochSecondsOf(session.expiresAt));
  }
  await deps.cutoffs.writeCutoff([scope], {
    entry: {
      id: deps.random.uuid(),
      at,
      byUserId: deps.actor ?? OPERATOR,
      byKeyId: null,
      until,
      // Told once, as the operator's: the event bus receives it (docs/events.md).
      notice: {
        scope: { ...(boardId !== undefined ? { boardId } : {}), ...(userId !== undefined ? { userId } : {}) },
        revoked,
        writtenAt: now.toISOString(),
      },
    },
    countedThrough: at,
    now: now.toISOString(),
  });
  return { revoked, cutoff: at, scope: scope.kind };
}

/** What `compactLegacyCutoffs` did. */
export interface CutoffCompaction {
  /** Records found that were written before records were bounded. */
  records: number;
  /** Those rewritten bounded, with an expiry. */
  compacted: number;
  /** Those a revoke-all wrote meanwhile (bounded by that write): left to it. */
  skipped: number;
  entriesBefore: number;
  entriesAfter: number;
  /** Then every record given all its copies (`CutoffRecordStore.copyCutoffs`). */
  copies: CutoffCopying;
}

/**
 * Migrates the cut-off records written before records were bounded and per tenant (they have no
 * revision, no expiry, and may hold thousands of entries, each naming creators): each is rewritten with,
 * of the entries naming the same creators (or none), only the latest, which covers every session the
 * others did; and with the latest expiry of the sessions it covers (read from the whole table, strongly
 * consistently), so it expires with them. A session an earlier entry covered shows that latest entry's
 * instant from then on: still revoked. The records of the scopes still written (a key owner's, a
 * board's, a user id's, the stage's) are also made bounded by their next revoke-all; those of the scopes
 * no longer written (an organization's and a board-and-user's, with member lists) only by this. Safe to
 * run again, and while revoke-alls run: a record a revoke-all wrote since is left to that write.
 * Then every record written before records had copies (one item) gets its copies, holding what it
 * holds, and every copy gets what a version without copies wrote to copy 0 after the copy was made: a
 * session created since reads the copy it recorded (docs/scale.md#copies-of-a-record), so until this has
 * run such a cut-off covers it only when that is copy 0. `npm run deploy` runs this pass itself.
 */
export async function compactLegacyCutoffs(deps: OperateSessionsDeps): Promise<CutoffCompaction> {
  const now = epochSecondsOf(deps.clock.now().toISOString());
  const [records, sessions] = await Promise.all([deps.cutoffs.legacyCutoffs(), deps.sessions.listAll()]);
  // Each session under the key of every record that could cover it.
  const byScope = new Map<string, StoredSession[]>();
  for (const session of sessions) {
    for (const scope of cutoffScopesOf(session)) {
      const key = cutoffScopeKey(scope);
      const held = byScope.get(key);
      if (held) held.push(session);
      else byScope.set(key, [session]);
    }
  }
  const done: CutoffCompaction = {
    records: records.length,
    compacted: 0,
    skipped: 0,
    entriesBefore: 0,
    entriesAfter: 0,
    copies: { records: 0, copiesWritten: 0, unfinished: 0 },
  };
  for (const record of records) {
    // Expiring now when nothing it covers is alive any more.
    let coversUntil = Math.max(now, record.coversUntil ?? 0);
    for (const session of byScope.get(cutoffScopeKey(record.scope)) ?? []) {
      if (coveringCutoff(session, [record]) === undefined) continue;
      coversUntil = Math.max(coversUntil, epochSecondsOf(session.expiresAt));
    }
    const entries = latestPerCreators(record.entries).map((entry) => ({ ...entry, until: coversUntil }));
    done.entriesBefore += record.entries.length;
    if (await deps.cutoffs.replaceLegacyCutoff({ scope: record.scope, entries, coversUntil })) {
      done.compacted += 1;
      done.entriesAfter += entries.length;
    } else {
      done.skipped += 1;
    }
  }
  // After the compaction: a copy is made of the bounded record.
  done.copies = await deps.cutoffs.copyCutoffs(deps.clock.now().toISOString());
  return done;
}

/** Of the entries naming the same creators (or none), the latest: it covers all the others cover. */
function latestPerCreators(entries: readonly CutoffEntry[]): CutoffEntry[] {
  const latest = new Map<string, CutoffEntry>();
  for (const entry of entries) {
    const key = entry.creators === undefined ? '*' : JSON.stringify([...entry.creators].sort());
    const kept = latest.get(key);
    if (!kept || entry.at > kept.at || (entry.at === kept.at && entry.id > kept.id)) latest.set(key, entry);
  }
  return [...latest.values()];
}

async function selected(deps: OperateSessionsDeps, query: OperatorSessionQuery): Promise<StoredSession[]> {
  const { userId, boardId } = query;
  if (boardId !== undefined) {
    const ids: string[] = [];
    let below: string | undefined;
    do {
      const page = await deps.sessions.queryScope(
        { kind: 'board', boardId },
        { ...(below !== undefined ? { below } : {}), limit: 1_000 },
      );
      ids.push(...page.refs.map((ref) => ref.id));
      below = page.next;
    } while (below !== undefined);
    const sessions = await deps.sessions.getMany(ids);
    return userId === undefined ? sessions : sessions.filter((session) => session.userId === userId);
  }
  if (userId === undefined) throw new ValidationError('--user or --board is required');
  return deps.sessions.listAllOfUser(userId);
}

function operatorView(session: StoredSession, now: Date): OperatorSessionView {
  return {
    ...toSessionView(session, now),
    orgId: session.orgId,
    createdByUserId: session.createdByUserId,
    createdByKeyId: session.createdByKeyId,
    revokedByUserId: session.revokedByUserId,
    revokedByKeyId: session.revokedByKeyId,
  };
}
