import type { Board } from '#lib/domain/board';
import { appOrigin, type BoardAppUrlRule, isBoardAppUrl } from '#lib/domain/board-app';
import { ID_TOKEN_MAX_LIFETIME_SECONDS, type IdTokenClaims } from '#lib/domain/id-token';
import type { Clock, IdTokenSigner, PairwiseSubjects, RandomSource } from '#lib/domain/ports';
import type { EmbedView } from './open-embed-session';

export interface HandOffDeps {
  signer: IdTokenSigner;
  subjects: PairwiseSubjects;
  clock: Clock;
  random: RandomSource;
}

/** Where the embed page sends the user, and the ID token it sends with them. */
export interface HandOff {
  url: string;
  idToken: string;
}

/**
 * The application a board's users are handed to: the board's own `appUrl`, else the stage's default,
 * else none (the built-in page). An app URL that breaks the rule (written to the table by hand, say) is
 * ignored as if the board had none, so no token is ever sent where the rule forbids.
 */
export function boardAppUrlOf(
  board: Board,
  stageDefault: string | undefined,
  rule: BoardAppUrlRule,
): string | undefined {
  if (board.appUrl && isBoardAppUrl(board.appUrl, rule)) return board.appUrl;
  return stageDefault && isBoardAppUrl(stageDefault, rule) ? stageDefault : undefined;
}

/**
 * Vouches for the user of a usable embed session to the board's application: an ID token for the app's
 * origin, issued by `issuer`, good for five minutes at most and never past the session's expiry (which it
 * carries, `session_exp`, so the app's own session ends with the embed session), with a pairwise subject
 * (stable for the tenant's user, unrelated across tenants), the tenant's opaque id (`tid`) and a fresh
 * `jti` the app uses to refuse a replay. Only what the session's creator vouched for goes in: never the session token
 * nor anything derived from it.
 */
export async function handOff(
  deps: HandOffDeps,
  view: EmbedView,
  target: { issuer: string; appUrl: string },
): Promise<HandOff> {
  const { session, board } = view;
  const now = deps.clock.now().getTime();
  const iat = Math.floor(now / 1000);
  const sessionEndMs = Date.parse(session.expiresAt);
  const sessionEnd = Math.floor(sessionEndMs / 1000);
  // Both from the tenant the session recorded at creation, never from the board alone.
  const [sub, tid] = await Promise.all([
    deps.subjects.subjectOf(session.tenant, session.userId),
    deps.subjects.tenantIdOf(session.tenant),
  ]);
  const claims: IdTokenClaims = {
    iss: target.issuer,
    aud: appOrigin(target.appUrl),
    sub,
    tid,
    user_id: session.userId,
    email: session.email,
    given_name: session.firstName,
    family_name: session.lastName,
    picture: session.avatarUrl,
    plan: session.plan,
    metadata: session.metadata,
    board_id: board.boardId,
    board_name: board.name,
    sid: session.id,
    iat,
    exp: Math.min(iat + ID_TOKEN_MAX_LIFETIME_SECONDS, sessionEnd),
    // Whole seconds, chosen so that session_exp − iat is the time the session has left, rounded down: an
    // application counting it from the hand-off ends its session within a second before the embed
    // session does, never after (the session's expiry itself, floored, could be a second later).
    session_exp: iat + Math.floor((sessionEndMs - now) / 1000),
    jti: deps.random.uuid(),
  };
  return { url: target.appUrl, idToken: await deps.signer.sign(claims) };
}
