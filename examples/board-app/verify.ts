/**
 * Verifying what the embed session service sends a board application, with `jose` and nothing else:
 * the ID token of the hand-off, and the logout token of OpenID Connect Back-Channel Logout 1.0. Both start
 * from the issuer alone: its discovery document names the JWKS, whose keys `createRemoteJWKSet` fetches
 * and caches (and fetches again, at most every 30 seconds, for a `kid` it does not hold yet).
 */
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

/** The claims of the hand-off's ID token this application reads (see docs/board-apps.md for all). */
export interface BoardUser extends JWTPayload {
  sub: string;
  /** The tenant the user belongs to, when the service names it: a user is (`tid`, `sub`). */
  tid?: string;
  sid: string;
  jti: string;
  iat: number;
  exp: number;
  /** The embed session's own expiry, in seconds on the service's clock, like `iat`. */
  session_exp: number;
  email: string;
  given_name: string | null;
  family_name: string | null;
  picture: string | null;
  board_id: string;
  board_name: string | null;
}

/** Whom a logout token logs out: one embed session (`sid`), or a user's every session (`sub`, `tid`). */
export type LoggedOut = { sid: string } | { sub: string; tid?: string };

/** Why a token was refused; the page says which, never how the check failed inside. */
export type Refusal = 'invalid' | 'expired' | 'replayed' | 'audience' | 'unavailable';

export class TokenRefused extends Error {
  constructor(
    readonly reason: Refusal,
    detail: string,
  ) {
    super(detail);
    this.name = 'TokenRefused';
  }
}

/** The back-channel logout event a logout token must carry. */
export const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** Clock skew tolerated on `exp`, `iat` and `nbf`. */
const CLOCK_TOLERANCE_SECONDS = 5;
/** A hand-off token is good for five minutes at most; an older `iat` is refused whatever its `exp`. */
const MAX_HANDOFF_AGE = '5m';
/** A logout token is sent at once; one older than this is refused. */
const MAX_LOGOUT_AGE = '10m';

export interface TokenVerifierOptions {
  /** The service's public base URL: the `iss` of its tokens, and where its discovery document is. */
  issuer: string;
  /** This application's origin: the `aud` of every token meant for it. */
  audience: string;
  /** The time, for tests; the system clock otherwise. */
  now?: () => Date;
}

/**
 * Verifies hand-off and logout tokens for one issuer and one audience. The JWKS is found through the
 * issuer's discovery document on first use (and found again if that fails); each `jti` of an accepted
 * hand-off is remembered until its `exp`, so the same token is refused a second time.
 */
export class TokenVerifier {
  readonly #issuer: string;
  readonly #audience: string;
  readonly #now: () => Date;
  #jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  /** `jti` → its token's `exp` (seconds): the hand-offs already used. */
  readonly #seen = new Map<string, number>();

  constructor(options: TokenVerifierOptions) {
    this.#issuer = options.issuer.replace(/\/+$/, '');
    this.#audience = options.audience;
    this.#now = options.now ?? (() => new Date());
  }

  /** The claims of a good hand-off token, once; throws `TokenRefused` otherwise. */
  async verifyHandOff(idToken: string): Promise<BoardUser> {
    const payload = await this.#verify(idToken, MAX_HANDOFF_AGE);
    for (const claim of ['sub', 'sid', 'jti', 'email', 'board_id'] as const) {
      if (typeof payload[claim] !== 'string' || payload[claim] === '')
        throw new TokenRefused('invalid', `the token has no ${claim}`);
    }
    for (const claim of ['iat', 'exp', 'session_exp'] as const) {
      if (typeof payload[claim] !== 'number') throw new TokenRefused('invalid', `the token has no ${claim}`);
    }
    if ('tid' in payload && (typeof payload.tid !== 'string' || payload.tid === ''))
      throw new TokenRefused('invalid', 'the token has a tid that is not a string');
    // A logout token (or any other event token) is never a sign-in.
    if ('events' in payload) throw new TokenRefused('invalid', 'an event token is not an ID token');
    this.#forgetExpired();
    const jti = payload.jti as string;
    if (this.#seen.has(jti)) throw new TokenRefused('replayed', `jti ${jti} was used already`);
    this.#seen.set(jti, payload.exp as number);
    return payload as BoardUser;
  }

  /**
   * Whom a good logout token logs out (Back-Channel Logout 1.0, section 2.6): signature, `iss`, `aud`,
   * `iat`, the back-channel logout event, a `sid` or a `sub` (or both), and no `nonce`. A token with a
   * `sid` ends that embed session; one without ends every session of its user (`sub`, in its tenant `tid`
   * when it names one). Throws `TokenRefused` otherwise.
   */
  async verifyLogout(logoutToken: string): Promise<LoggedOut> {
    const payload = await this.#verify(logoutToken, MAX_LOGOUT_AGE);
    const events = payload.events as Record<string, unknown> | undefined;
    const event = events && typeof events === 'object' ? events[LOGOUT_EVENT] : undefined;
    if (event === null || typeof event !== 'object' || Array.isArray(event))
      throw new TokenRefused('invalid', 'the token carries no back-channel logout event');
    if ('nonce' in payload) throw new TokenRefused('invalid', 'a logout token has no nonce');
    const named = (claim: 'sid' | 'sub' | 'tid') => {
      const value = payload[claim];
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || value === '')
        throw new TokenRefused('invalid', `the logout token's ${claim} is not a string`);
      return value;
    };
    const sid = named('sid');
    const sub = named('sub');
    const tid = named('tid');
    if (sid !== undefined) return { sid };
    if (sub !== undefined) return tid === undefined ? { sub } : { sub, tid };
    throw new TokenRefused('invalid', 'the logout token names neither a sid nor a sub');
  }

  async #verify(token: string, maxTokenAge: string): Promise<JWTPayload> {
    const jwks = await this.#keys();
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: this.#issuer,
        audience: this.#audience,
        algorithms: ['ES256'],
        requiredClaims: ['iat'],
        maxTokenAge,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: this.#now(),
      });
      return payload;
    } catch (error) {
      throw refusalOf(error);
    }
  }

  /** The issuer's key set, found through its discovery document; a failed discovery is tried again. */
  #keys(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.#jwks ??= this.#discover();
    this.#jwks.catch(() => {
      this.#jwks = undefined;
    });
    return this.#jwks;
  }

  async #discover(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const response = await fetch(`${this.#issuer}/.well-known/openid-configuration`);
      if (!response.ok) throw new Error(`discovery answered ${response.status}`);
      document = (await response.json()) as typeof document;
    } catch (error) {
      throw new TokenRefused('unavailable', `cannot read the issuer's discovery document: ${error}`);
    }
    // OpenID Connect Discovery 1.0, section 4.3: the document must name exactly the issuer asked.
    if (document.issuer !== this.#issuer || typeof document.jwks_uri !== 'string')
      throw new TokenRefused('unavailable', 'the discovery document names another issuer or no jwks_uri');
    return createRemoteJWKSet(new URL(document.jwks_uri));
  }

  #forgetExpired(): void {
    const now = this.#now().getTime() / 1000 - CLOCK_TOLERANCE_SECONDS;
    for (const [jti, exp] of this.#seen) if (exp < now) this.#seen.delete(jti);
  }
}

/** What a `jose` error means for the person in front of the page. */
function refusalOf(error: unknown): TokenRefused {
  if (error instanceof TokenRefused) return error;
  const code = (error as { code?: string }).code;
  const detail = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_JWT_EXPIRED') return new TokenRefused('expired', detail);
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && (error as { claim?: string }).claim === 'aud')
    return new TokenRefused('audience', detail);
  // The key set could not be fetched: a network failure (no `jose` code), a timeout or a bad answer.
  if (code === undefined || code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC')
    return new TokenRefused('unavailable', detail);
  return new TokenRefused('invalid', detail);
}
