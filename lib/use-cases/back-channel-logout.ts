/**
 * OpenID Connect Back-Channel Logout 1.0 to board applications: the EventSink that, when a session of a
 * board with a `logoutUrl` is revoked or expires, POSTs the board's application a `logout_token` naming
 * that session, and the attempt of one such delivery. Retried like webhook deliveries, on the same
 * scheduler port (a timer locally; on AWS the webhook delivery queue, whose worker signs at send time).
 */
import type { Board } from '#lib/domain/board';
import { appOrigin, type BoardAppUrlRule, boardAppUrlProblem } from '#lib/domain/board-app';
import type { EventSink, RoutedEvent } from '#lib/domain/events';
import {
  BACKCHANNEL_LOGOUT_EVENT,
  LOGOUT_TOKEN_LIFETIME_SECONDS,
  type LogoutTokenClaims,
} from '#lib/domain/id-token';
import type {
  BoardRepository,
  Clock,
  IdTokenSigner,
  PairwiseSubjects,
  RandomSource,
} from '#lib/domain/ports';
import type { Logger, Metrics } from '#lib/domain/telemetry';
import { legacyTenant, parseTenant, type Tenant } from '#lib/domain/tenant';
import { boardAppUrlOf } from '#lib/use-cases/hand-off';
import {
  type AttemptOutcome,
  DELIVERY_TIMEOUT_MS,
  type DeliveryScheduler,
  type HttpPost,
  isQueuedAttempt,
  settleAttempt,
} from '#lib/use-cases/webhook-delivery';

/** The metric counting back-channel logouts given up after their last attempt. */
export const LOGOUT_EXHAUSTED_METRIC = 'BackChannelLogoutsExhausted';
/** The metric counting back-channel logouts not sent: their destination was refused when sending. */
export const LOGOUT_REFUSED_METRIC = 'BackChannelLogoutsRefused';

/** The event types that end a session, and with it the application's session. */
const ENDING = new Set(['session.revoked', 'session.expired']);

/** One logout for one ended session: what waits between attempts. Holds no token (each attempt signs). */
export interface LogoutDelivery {
  /** The event that ended the session (for the logs). */
  eventId: string;
  sessionId: string;
  boardId: string;
  /** The external user the session was for: its pairwise subject is the token's `sub`. */
  userId: string;
  /**
   * The session's tenant, which the subject is per. Absent only from a message queued before tenants were
   * recorded: such a logout is for a session of the board's organization (`legacyTenant`).
   */
  tenant?: Tenant;
  /** How many attempts failed before this one. */
  attempt: number;
}

/** True for a well-formed LogoutDelivery (a queue message's, say). */
export function isLogoutDelivery(value: unknown): value is LogoutDelivery {
  if (!isQueuedAttempt<LogoutDelivery>(value, ['eventId', 'sessionId', 'boardId', 'userId'])) return false;
  return value.tenant === undefined || parseTenant(value.tenant) !== undefined;
}

/** Where a board's logouts go, and the audience they are for. */
export interface LogoutTarget {
  logoutUrl: string;
  /** The origin of the application the board hands its users to: the ID token's `aud`, the same here. */
  audience: string;
}

/**
 * Where a board's application receives logouts: its `logoutUrl`, when it has one that meets the app URL
 * rule and the board has an application (its own `appUrl` or the stage's default), whose origin is the
 * audience. Undefined otherwise: a board without an application was never handed a session, and a board
 * without a `logoutUrl` is sent nothing.
 */
export function logoutTargetOf(
  board: Board,
  stageAppUrl: string | undefined,
  rule: BoardAppUrlRule,
): LogoutTarget | undefined {
  if (!board.logoutUrl || boardAppUrlProblem(board.logoutUrl, rule) !== undefined) return undefined;
  const appUrl = boardAppUrlOf(board, stageAppUrl, rule);
  return appUrl ? { logoutUrl: board.logoutUrl, audience: appOrigin(appUrl) } : undefined;
}

export interface LogoutDeps {
  boards: BoardRepository;
  /** The ID token signer and pairwise subjects (made on first use: most events need neither). */
  tokens: () => Promise<IdTokenSigner & PairwiseSubjects>;
  /** The tokens' `iss`: the service's public base URL, as in the ID token. */
  issuer: string;
  /** The stage's default board application (`BOARD_APP_URL`). */
  stageAppUrl: string | undefined;
  appUrlRule: BoardAppUrlRule;
  scheduler: DeliveryScheduler<LogoutDelivery>;
  post: HttpPost;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  metrics: Metrics;
  /** Seconds to wait after each failed attempt (the webhook schedule); after the last, given up. */
  retrySeconds: readonly number[];
}

/** The sink: each `session.revoked` and `session.expired` of a board with a logout target, once. */
export class BackChannelLogoutSink implements EventSink {
  constructor(
    private readonly deps: Pick<LogoutDeps, 'boards' | 'stageAppUrl' | 'appUrlRule' | 'scheduler'>,
  ) {}

  async publish(events: readonly RoutedEvent[]): Promise<void> {
    const boards = new Map<string, Promise<Board | undefined>>();
    for (const routed of events) {
      // A revoke-all's `sessions.revoked` names no session: nothing to log out by `sid` here.
      if (routed.sessionId === null || !ENDING.has(routed.event.type)) continue;
      let board = boards.get(routed.boardId);
      if (!board) {
        board = this.deps.boards.get(routed.boardId);
        boards.set(routed.boardId, board);
      }
      const found = await board;
      if (!found || !logoutTargetOf(found, this.deps.stageAppUrl, this.deps.appUrlRule)) continue;
      await this.deps.scheduler.schedule(
        {
          eventId: routed.event.id,
          sessionId: routed.sessionId,
          boardId: routed.boardId,
          userId: routed.event.data.session.userId,
          tenant: routed.tenant,
          attempt: 0,
        },
        0,
      );
    }
  }
}

/**
 * The logout token of one attempt: `iss`, `aud` (the application's origin), `sub` (the pairwise subject
 * of the ID token: the session's tenant's, as the hand-off derived it), `sid`, a fresh `iat`, `exp` and
 * `jti`, the back-channel logout event, no `nonce`; header `typ: logout+jwt`.
 */
export async function logoutToken(
  deps: Pick<LogoutDeps, 'tokens' | 'issuer' | 'clock' | 'random'>,
  board: Board,
  target: LogoutTarget,
  delivery: LogoutDelivery,
): Promise<string> {
  const tokens = await deps.tokens();
  const iat = Math.floor(deps.clock.now().getTime() / 1000);
  const claims: LogoutTokenClaims = {
    iss: deps.issuer,
    aud: target.audience,
    sub: await tokens.subjectOf(delivery.tenant ?? legacyTenant(board.orgId), delivery.userId),
    sid: delivery.sessionId,
    iat,
    exp: iat + LOGOUT_TOKEN_LIFETIME_SECONDS,
    jti: deps.random.uuid(),
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  };
  return tokens.sign(claims);
}

/**
 * One attempt: the board is read again (a board whose `logoutUrl` was cleared is sent nothing more), a
 * token is signed for this attempt, and POSTed as a form; a 2xx within 10 s is done, anything else
 * (a 3xx too: redirects are never followed) is scheduled again after its backoff, or counted once the
 * schedule is spent. Never logs the token.
 */
export async function attemptLogout(deps: LogoutDeps, delivery: LogoutDelivery): Promise<AttemptOutcome> {
  const context = {
    eventId: delivery.eventId,
    sessionId: delivery.sessionId,
    boardId: delivery.boardId,
    attempt: delivery.attempt + 1,
  };
  const board = await deps.boards.get(delivery.boardId);
  const target = board ? logoutTargetOf(board, deps.stageAppUrl, deps.appUrlRule) : undefined;
  if (!board || !target) {
    deps.logger.info('board has no logout URL any more; logout dropped', context);
    return 'endpoint-deleted';
  }
  const token = await logoutToken(deps, board, target, delivery);
  const status = await deps.post(
    target.logoutUrl,
    {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'embed-session-logout/1',
      'cache-control': 'no-store',
    },
    new URLSearchParams({ logout_token: token }).toString(),
    DELIVERY_TIMEOUT_MS,
  );
  return settleAttempt(deps, delivery, status, context, {
    delivered: 'back-channel logout delivered',
    givenUp: 'back-channel logout given up after its last attempt',
    retrying: 'back-channel logout failed; retrying',
    exhaustedMetric: LOGOUT_EXHAUSTED_METRIC,
    refused: 'back-channel logout refused: its destination is not on the public internet; not sent',
    refusedMetric: LOGOUT_REFUSED_METRIC,
  });
}
