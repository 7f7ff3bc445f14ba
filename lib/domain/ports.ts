/**
 * Everything a use case needs from the outside world, as interfaces, in the domain's words: what is kept
 * and found, never how or where. Adapters implement them; tests pass in-memory fakes.
 */
import type { ApiKeyRecord, RateLimit } from './api-key';
import type { Board } from './board';
import type { CutoffRecord, CutoffScope, CutoffWrite } from './cutoffs';
import type { RoutedEvent } from './events';
import type { PublicSigningJwk, SignedTokenClaims } from './id-token';
import type { IdempotencyAttempt, IdempotencyRecord } from './idempotency';
import type { Keyring, PublicKeyring } from './keyring';
import type { Revocation, SessionBinding, StoredSession } from './session';
import type { Tenant } from './tenant';
import type { WebhookEndpoint } from './webhook';

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
  /** Creates or replaces a board; false (and nothing written) when it exists under another organization. */
  put(board: Board): Promise<boolean>;
  list(): Promise<Board[]>;
  /** One organization's boards, sorted by id (operators only: it reads every board). */
  listOfOrg(orgId: string): Promise<Board[]>;
  /** Deletes the board if `orgId` owns it; false when there was no such board of that organization. */
  delete(boardId: string, orgId: string): Promise<boolean>;
}

export interface MembershipRepository {
  /**
   * Strongly consistent: a membership removed a moment ago no longer counts. The create path reads it
   * through its environment's 1 s cache (lib/adapters/cache/read-cache.ts), so there a change counts within a second.
   */
  isMember(orgId: string, userId: string): Promise<boolean>;
  /** Every organization the user is a member of now (each confirmed by a consistent read). */
  orgsOf(userId: string): Promise<string[]>;
  /** Every member of the organization now (strongly consistent). */
  membersOf(orgId: string): Promise<string[]>;
  /**
   * When the user's current membership of the organization began (strongly consistent): its `addedAt`;
   * null for a membership recorded without one; undefined when the user is not a member now.
   */
  memberSince(orgId: string, userId: string): Promise<string | null | undefined>;
  /** Records the membership (idempotent), stamped with the time it was added and, when named, by whom. */
  add(orgId: string, userId: string, addedAt: string, addedBy?: string): Promise<void>;
  remove(orgId: string, userId: string): Promise<boolean>;
}

/**
 * Where a token points: enough to read the session itself (consistently), its board, and the cut-off
 * records that could cover it. Every field is fixed when the session is created, so a match is exact
 * once the token can be found at all.
 */
export interface TokenMatch {
  id: string;
  boardId: string;
  orgId: string;
  userId: string;
  createdByUserId: string;
  createdByKeyId: string;
  /** As `StoredSession.readsCutoffCopy` (the token index holds the whole session). */
  readsCutoffCopy?: number;
}

/**
 * A set of sessions one caller may reach, each listed newest first: the sessions of one
 * external user (optionally on one board) in one organization or created by one key owner, or the
 * sessions on one board, all of them or those one key owner created.
 */
export type SessionScope =
  | { kind: 'orgUser'; orgId: string; userId: string; boardId?: string }
  | { kind: 'creatorUser'; creatorUserId: string; userId: string; boardId?: string }
  | { kind: 'board'; boardId: string }
  | { kind: 'creatorBoard'; creatorUserId: string; boardId: string };

/**
 * A session's place in the newest-first order: `createdAt#id`. Unique and total, so a page boundary
 * is exact: nothing is repeated or skipped.
 */
export type SessionPosition = string;

export interface SessionRef {
  id: string;
  position: SessionPosition;
  /** Who created it, where the scope's listing tells it (the organization scopes). */
  createdByUserId?: string;
  /**
   * The session's state as the scope's listing tells it, where it does (every scope but `creatorBoard`):
   * eventually consistent, so a revocation of a moment ago may not show yet.
   */
  state?: IndexedState;
}

/**
 * What a session's status and the cut-off records that could cover it follow from, apart from its
 * position: the subject (fixed at creation), its expiry (fixed) and its own revocation.
 */
export type IndexedState = Pick<
  StoredSession,
  'orgId' | 'userId' | 'boardId' | 'createdByUserId' | 'expiresAt' | 'revokedAt'
>;

/** One page of a scope, newest first; `next` is where to continue (below it), undefined at the end. */
export interface ScopePage {
  refs: SessionRef[];
  next: SessionPosition | undefined;
}

/**
 * One of the partitions a scope is split into, read newest first page by page: the scope is the union
 * of its partitions, so a reader merges them and reads each only as far as the merge consumes it.
 */
export interface ScopePartition {
  /** Up to `limit` sessions of this partition below `below` (exclusive), newest first. */
  page(options: { below?: SessionPosition; limit: number }): Promise<ScopePage>;
}

/**
 * A session revoke-all's count may count: active at the cut-off as its scope's listing tells it (created at
 * or before it, not expired then, not revoked on its own), with what tells which cut-off records could
 * cover it.
 */
export type CountCandidate = Pick<
  StoredSession,
  'id' | 'orgId' | 'userId' | 'boardId' | 'createdByUserId' | 'createdAt' | 'expiresAt'
>;

/**
 * The sessions a cut-off record covers, for the logouts of a revoke-all: a session scope (narrowed to a
 * board where it names one), or a scope no listing keeps, read by going through every session: every
 * session of an external user id across tenants, every session of the stage, every session one API key
 * created, one key owner's sessions on one organization's boards.
 */
export type CoveredScope =
  | SessionScope
  | { kind: 'allOfUser'; userId: string }
  | { kind: 'stage' }
  | { kind: 'key'; keyId: string }
  | { kind: 'orgCreator'; orgId: string; creatorUserId: string };

/** The covered scopes no listing keeps: found by going through every session, part by part. */
export type UnlistedScope = Exclude<CoveredScope, SessionScope>;

/** Which sessions of a scope a cut-off entry may have ended: created after `since` (when given) and at or before `upTo`. */
export interface CoveredRange {
  since?: string;
  /** The entry's instant: the sessions must have been created by then, and not expired before it. */
  upTo: string;
}

/** One page of one part of a covered scope, in creation order. */
export interface CoveredPage {
  /** The sessions as they are now (read strongly consistently), none revoked on its own. */
  sessions: StoredSession[];
  /** Where the part continues (opaque), or undefined once it is done. */
  next?: string;
}

/**
 * What the logouts of a revoke-all read: the cut-off records, and the sessions a record's scope holds,
 * part by part (the scope's partitions, or parts of all sessions), each part a page at a time, so no step
 * of the work holds more than one page.
 */
export interface CoveredSessions {
  /** How many parts every covered scope is read in: the parts are 0 to `coveredParts - 1`. */
  readonly coveredParts: number;
  /** As `SessionRepository.readCutoffs`. */
  readCutoffs(scopes: readonly CutoffScope[]): Promise<CutoffRecord[]>;
  /**
   * Raises the record's latest known expiry (`coversUntil`, and the record's own expiry where it has one)
   * to `until` (epoch seconds) when it is lower: the logouts' pass reads the sessions a cut-off covers after the
   * call, those its count could not see included. Every copy of the record is raised (each expires on
   * its own). A record that is gone is left gone.
   */
  extendCutoffExpiry(scope: CutoffScope, until: number): Promise<void>;
  /**
   * Up to `limit` entries of one part of the scope, created in `range`, not revoked on their own and not
   * expired before `range.upTo` (as the listing tells them), continuing after `after`; the sessions
   * among them, read again consistently. A page may hold fewer sessions than `limit`, or none, and still
   * have a `next`.
   */
  coveredPage(
    scope: CoveredScope,
    part: number,
    range: CoveredRange,
    options: { after?: string; limit: number },
  ): Promise<CoveredPage>;
}

/**
 * The part of the session repository the embed page uses: find a session by token, read it with its
 * cut-offs, bind it, mark it opened.
 */
export interface EmbedSessionRepository {
  /**
   * The session a token hash points to, from an eventually consistent lookup: only for sessions created
   * before ids were derived from tokens (`sessionIdOfToken`).
   */
  lookupToken(tokenHash: string): Promise<TokenMatch | undefined>;
  /** The session as it is now (strongly consistent). */
  get(id: string): Promise<StoredSession | undefined>;
  /**
   * The session a token points to and every cut-off record that could cover it, in one strongly
   * consistent read, the cut-offs applied (see withCutoffs).
   */
  getCovered(match: TokenMatch): Promise<StoredSession | undefined>;
  /**
   * Binds a `bindToBrowser` session that is neither bound nor revoked yet, in one conditional write; true
   * when this call bound it, false when another call did first (or it was revoked meanwhile).
   */
  bind(id: string, binding: SessionBinding): Promise<boolean>;
  /**
   * Records the first successful load of the embed page, once: one write conditioned on no `openedAt`
   * yet, its refusal (recorded before, by another load or by this write's retry) being success.
   */
  markOpened(id: string, openedAt: string): Promise<void>;
  /** Removes a binding, only if it is this one (`bindingHash`): undoes a bind that may have landed unanswered. */
  unbind(id: string, bindingHash: string): Promise<void>;
  /**
   * The records of these scopes as they are now (strongly consistent); scopes without one are left out.
   * Copy 0 of each, which holds every version's cut-offs: the sessions these reads serve are known by
   * index entries, which do not say which copy a session reads.
   */
  readCutoffs(scopes: readonly CutoffScope[]): Promise<CutoffRecord[]>;
  /** The sessions with the cut-offs that cover them applied, in one read of their records. */
  applyCutoffs(sessions: readonly StoredSession[]): Promise<StoredSession[]>;
}

export interface SessionRepository extends EmbedSessionRepository {
  /**
   * Stores a new session; never overwrites an existing one. Answers the session as stored: `session`, or
   * the same session (same id and token hash) written before by an earlier run of this very request.
   */
  create(session: StoredSession): Promise<StoredSession>;
  /** The sessions with these ids as they are now (strongly consistent); missing ids are left out. */
  getMany(ids: readonly string[]): Promise<StoredSession[]>;
  /** Up to `limit` sessions of a scope below `below` (exclusive), newest first. */
  queryScope(scope: SessionScope, options: { below?: SessionPosition; limit: number }): Promise<ScopePage>;
  /** The partitions a scope is split into, to be merged newest first (see ScopePartition). */
  scopePartitions(scope: SessionScope): ScopePartition[];
  /**
   * The state of the sessions with these ids as it is now (strongly consistent), without the rest of
   * each session: for the scopes whose listing tells no state. Missing ids are left out.
   */
  statesOf(ids: readonly string[]): Promise<Array<IndexedState & Pick<StoredSession, 'id' | 'createdAt'>>>;
  /** Revokes the session unless it is revoked already; returns it as it now is (the first revocation wins). */
  revoke(id: string, revocation: Revocation): Promise<StoredSession | undefined>;
  /**
   * Every session of a scope that was active at `at` (created at or before it, not expired then, not
   * revoked on its own), as the scope's listing tells it: eventually consistent, so a session created or
   * revoked a moment ago may not show yet. The scope's partitions are read in parallel, and only
   * what `CountCandidate` needs comes back. `exceptOrgs` may leave out the sessions on those
   * organizations' boards (counted through their own scopes); the caller still removes duplicates.
   * `after` leaves out the sessions created at or before it (an earlier cut-off covers them): only the
   * sessions created since are read.
   */
  scopeCandidates(
    scope: SessionScope,
    at: string,
    options?: { exceptOrgs?: readonly string[]; after?: string },
  ): Promise<CountCandidate[]>;
  /** Every session of every tenant, for operators only (it goes through every session). */
  listAll(): Promise<StoredSession[]>;
  /** Every session of an external user across all tenants, for operators only (goes through all sessions). */
  listAllOfUser(userId: string): Promise<StoredSession[]>;
}

/**
 * The writes of revocation cut-off records (revoke-all's, the operators'), apart from the sessions'
 * repository, which every reader of sessions uses: only revoke-all and the operators write cut-offs.
 */
export interface CutoffRecordStore {
  /**
   * Merges `write` into the record of each scope (`mergeCutoff`: the record stays within
   * CUTOFF_ENTRIES_MAX entries and gets its expiry), whatever the sessions it holds: one conditional
   * write per copy of each scope's record (an embed load reads one copy), read again and merged anew when
   * another write reached the copy first. It answers only once every write has settled, so once it has
   * resolved every copy holds the cut-off. Writing the same entry again (a retry after a lost answer, or
   * after some copies failed) leaves the written copies as they were and completes the rest. Rejects with
   * `CutoffContentionError` when other writes keep reaching a record first, and with
   * `StorageUnavailableError` when the store does not answer: some scopes (and copies) may be written then.
   */
  writeCutoff(scopes: readonly CutoffScope[], write: CutoffWrite): Promise<void>;
  /**
   * Removes the entry from the records of these scopes where it is, undoing a write of it that has not
   * been counted (a call's first cut-off): every cut-off the record held before that write still covers
   * what it covered. A record the entry is not in is left as it is.
   */
  removeCutoffEntry(scopes: readonly CutoffScope[], entryId: string, now: string): Promise<void>;
  /**
   * Every cut-off record written before records were bounded (it has no revision), as kept: operators
   * only (it goes through every record).
   */
  legacyCutoffs(): Promise<CutoffRecord[]>;
  /**
   * Replaces such a record by `record` (its entries counted, expiring at `coversUntil`) in one
   * conditional write; false when a revoke-all wrote the record since (it is bounded already).
   */
  replaceLegacyCutoff(record: CutoffRecord & { coversUntil: number }): Promise<boolean>;
  /**
   * Gives every record written before records had copies (copy 0 alone) all its copies, each holding
   * what the record holds, and completes every copy with what a version without copies wrote to copy 0
   * since the copy was made (during a deploy): operators and `npm run deploy` only (it goes through every
   * record). `now` is the writer's clock of the merges (`CutoffWrite.now`). Safe to run again and while
   * revoke-alls run.
   */
  copyCutoffs(now: string): Promise<CutoffCopying>;
}

/** What `CutoffRecordStore.copyCutoffs` did. */
export interface CutoffCopying {
  /** Records seen (their copy 0). */
  records: number;
  /** Copies created from copy 0, or completed with what it holds from a version without copies. */
  copiesWritten: number;
  /** Records left without all their copies (still unbounded, or other writes kept coming first): run again. */
  unfinished: number;
}

export interface ApiKeyRepository {
  getByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  create(record: ApiKeyRecord): Promise<void>;
  /**
   * Marks the key revoked (by `revokedBy`, when named); returns the updated record or undefined when no
   * key has that id.
   */
  revoke(keyId: string, revokedAt: string, revokedBy?: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Records that the key was used at `at`, unless its recorded last use is at or after `staleBefore`
   * (one conditional write, whose refusal is the answer that nothing needed writing).
   */
  recordUse(keyHash: string, at: string, staleBefore: string): Promise<void>;
  /**
   * Records that the key is in the platform's throttling (API Gateway's usage plans) since `at`, unless it
   * was recorded before (one conditional write, whose refusal means that nothing needed writing).
   */
  recordUsagePlan(keyHash: string, at: string): Promise<void>;
  list(userId?: string): Promise<ApiKeyRecord[]>;
  /**
   * Sets the key's own rate limit (null: back to the defaults) unless it is revoked; returns the record as
   * it now is, or undefined when no key has that id.
   */
  setLimits(keyId: string, limits: RateLimit | null): Promise<ApiKeyRecord | undefined>;
}

/**
 * Per-key throttling that the platform enforces outside this service's records (usage plans on AWS). The key
 * record stays the source of truth; this port keeps the platform in step with it. Every method is
 * idempotent, so an interrupted command can simply be run again.
 */
export interface KeyThrottling {
  /** Makes a new key known to the platform, at the default limits. */
  register(keyId: string): Promise<void>;
  /** Puts the key under its own limits, or under the defaults when null (registering it if need be). */
  apply(keyId: string, limits: RateLimit | null): Promise<void>;
  /** Forgets a revoked key. */
  remove(keyId: string): Promise<void>;
}

/**
 * Remembered Idempotency-Keys. Who holds a key is decided by conditional writes only; every write names
 * the attempt that made it, so an attempt whose answer was lost recognises its own write on a re-read.
 */
export interface IdempotencyRepository {
  /** Writes a fresh record for this attempt unless a record lives (one past its 24 hours does not). */
  create(id: string, attempt: IdempotencyAttempt, now: Date): Promise<boolean>;
  /** The record as it is now (strongly consistent); undefined when there is none or it is past its 24 hours. */
  get(id: string, now: Date): Promise<IdempotencyRecord | undefined>;
  /**
   * Takes over a record in progress whose lease has ended, for the same request (same fingerprint):
   * this attempt now holds it until its own lease ends, with the reservation the record already has
   * (else the attempt's). Undefined when the record was not in that state; else the reservation it holds.
   */
  takeOver(id: string, attempt: IdempotencyAttempt, now: Date): Promise<{ reservation?: string } | undefined>;
  /** Stores the response, if this attempt still holds the record; false when it does not. */
  complete(id: string, attemptId: string, response: { status: number; sealed: string }): Promise<boolean>;
  /**
   * Ends this attempt's lease at once (a failure that must not be replayed), if it still holds the
   * record: a retry takes over at once, with the same reservation.
   */
  release(id: string, attemptId: string): Promise<void>;
}

/**
 * Signs the ID tokens handed to board applications (ES256). The private key never leaves the adapter
 * that implements this.
 */
export interface IdTokenSigner {
  /**
   * The compact JWT of `claims` (an ID token, or a logout token), its header naming `alg` ES256 and the
   * signing key's `kid`.
   */
  sign(claims: SignedTokenClaims): Promise<string>;
}

/**
 * Pairwise subjects: the `sub` of an external user as board applications see it, per tenant (the one the
 * session recorded). Stable for one tenant's user, different for the same user id of another tenant, and
 * revealing neither (a keyed hash whose key only the adapter holds). With it, the tenant's own opaque id
 * (`tid`), for applications that tell tenants apart.
 */
export interface PairwiseSubjects {
  subjectOf(tenant: Tenant, userId: string): Promise<string>;
  /** The tenant's opaque id: stable, the same for every user of the tenant, revealing no raw id. */
  tenantIdOf(tenant: Tenant): Promise<string>;
}

/** The public keys that verify ID tokens, as published at `/.well-known/jwks.json`. */
export interface SigningKeySet {
  publicKeys(): Promise<PublicSigningJwk[]>;
}

/**
 * Where the signing keyring is kept (lib/domain/keyring.ts): one per stage. Reads are rare (each
 * signing environment re-reads it once a minute at most), and a write names the version it replaces.
 */
export interface KeyringStore {
  /** The whole keyring, sealed values included; undefined before the first rotation made it. */
  read(): Promise<Keyring | undefined>;
  /** The schedule and public halves only, for discovery: no sealed value is even read. */
  readPublic(): Promise<PublicKeyring | undefined>;
  /**
   * Writes `keyring` as version `previousVersion + 1` (the first, when `previousVersion` is undefined);
   * throws `KeyringChangedError` when the stored version is another.
   */
  replace(keyring: Keyring, previousVersion: number | undefined): Promise<Keyring>;
}

/**
 * A key no code of the service can read, only use: it encrypts the keyring's sealing
 * private key when the keyring is made, and decrypts it once per execution environment of a signing
 * function. `decrypt` is the only call a warm signing environment never makes again.
 */
export interface KeyEncryption {
  encrypt(plaintext: Uint8Array): Promise<Uint8Array>;
  decrypt(ciphertext: Uint8Array): Promise<Uint8Array>;
}

/** Webhook endpoints, partitioned by their owner: no read crosses tenants. */
export interface WebhookRepository {
  /**
   * Stores a new endpoint; when one with its id exists already (a retry of this very create, whose answer
   * was lost), answers that one if it is the same endpoint, and throws otherwise. Throws
   * `WebhookLimitReachedError` when the owner has `maxPerOwner` endpoints already, however many creates
   * run at once.
   */
  create(endpoint: WebhookEndpoint, limits: { maxPerOwner: number }): Promise<WebhookEndpoint>;
  get(ownerUserId: string, id: string): Promise<WebhookEndpoint | undefined>;
  /** The owner's endpoints, oldest first. */
  list(ownerUserId: string): Promise<WebhookEndpoint[]>;
  /**
   * Deletes the endpoint at `deletedAt`. True when it is deleted: by this call, or by an earlier one
   * (a retry after a lost answer or a 503 answers as the delete did, for 24 hours); false when the owner
   * had none with this id.
   */
  delete(ownerUserId: string, id: string, deletedAt: string): Promise<boolean>;
  /**
   * Moves a live endpoint from secret version `from` to `from + 1`, the old one signing until
   * `previousUntil`, as rotation `rotationId`; one conditional write. Answers the endpoint as it now is
   * (also when the write landed but its answer was lost: the re-read shows this rotation id), `conflict`
   * when another rotation moved it first, undefined when the owner has no such endpoint.
   */
  rotateSecret(
    ownerUserId: string,
    id: string,
    rotation: { from: number; previousUntil: string; rotationId: string },
  ): Promise<WebhookEndpoint | 'conflict' | undefined>;
}

/**
 * The per-host bound of webhook deliveries (a fixed window of one second per host), shared fairly between
 * owners: each owner has its share of every host's window (`fairShareWaitSeconds` in
 * lib/domain/destinations.ts). `admit` counts one delivery of `ownerUserId` to `host` in the current
 * second and answers how many seconds it must wait first (0: send it now); the counts are kept where
 * every delivery worker sees them.
 */
export interface DestinationRateLimit {
  admit(host: string, ownerUserId: string): Promise<number>;
}

/**
 * The signing secret of an endpoint, derived from a master key and the endpoint's id: usable for signing
 * and showable once, never stored; the master key never leaves the adapter that implements this.
 */
export interface WebhookSecrets {
  /**
   * `whsec_` and the base64 of 32 bytes; the same for the same endpoint id and version, always (version 1,
   * the default, is the secret shown at creation).
   */
  secretOf(endpointId: string, version?: number): Promise<string>;
}

/** A session noted as expiring, for the expiry sweep. */
export interface DueNote {
  sessionId: string;
  expiresAt: string;
  /** Noted before the notes were partitioned: under its minute alone. */
  legacy?: true;
}

/** Where the change feed keeps the events it derives (the events API reads them back). */
export interface EventRecorder {
  /** Stores the event under its fixed id, once; false when it was stored before. */
  record(routed: RoutedEvent): Promise<boolean>;
  /** Notes the session's expiry for the sweep, under the minute it falls in (idempotent). */
  scheduleExpiry(sessionId: string, expiresAt: string): Promise<void>;
}

/** The expiry sweep's notes, by minute (`minuteBucket`), and the last minute it went through completely. */
export interface ExpiryNotes {
  dueIn(bucket: string): Promise<DueNote[]>;
  clearDue(note: DueNote): Promise<void>;
  sweptThrough(): Promise<string | undefined>;
  markSwept(bucket: string): Promise<void>;
}
