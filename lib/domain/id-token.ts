/**
 * The ID token the embed page hands a board's own application: a JWT signed with ES256, in the shape any
 * OpenID Connect library verifies (issuer, audience, signature against the published keys, expiry). Pure:
 * the adapters behind `IdTokenSigner` sign what `jwtSigningInput` returns, each with its own key.
 */

/** The one algorithm: ECDSA on P-256 with SHA-256. */
export const ID_TOKEN_ALG = 'ES256';
/** A token is good for at most five minutes, and never past its session's expiry. */
export const ID_TOKEN_MAX_LIFETIME_SECONDS = 5 * 60;

/**
 * What every token the service signs claims: who issued it, for which application, the user (a pairwise
 * subject), the session, when it was issued and expires, and its unique id.
 */
interface SessionTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  sid: string;
  iat: number;
  exp: number;
  jti: string;
}

/** The claims of an ID token, exactly; the board application's documentation lists them. */
export interface IdTokenClaims extends SessionTokenClaims {
  /** The tenant whose user this is, opaquely: a keyed hash, stable per tenant, never a raw id. */
  tid: string;
  user_id: string;
  email: string;
  given_name: string | null;
  family_name: string | null;
  picture: string | null;
  plan: string | null;
  metadata: Record<string, unknown>;
  board_id: string;
  board_name: string | null;
  /** The embed session's own expiry (seconds since the epoch): an application's session ends by then. */
  session_exp: number;
}

/** The claims discovery announces (`claims_supported`): an ID token's, in the order it carries them. */
export const ID_TOKEN_CLAIMS: readonly (keyof IdTokenClaims)[] = [
  'iss',
  'aud',
  'sub',
  'tid',
  'user_id',
  'email',
  'given_name',
  'family_name',
  'picture',
  'plan',
  'metadata',
  'board_id',
  'board_name',
  'sid',
  'iat',
  'exp',
  'session_exp',
  'jti',
];

/** The event a logout token carries (OpenID Connect Back-Channel Logout 1.0, section 2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** The `typ` header of a logout token, which Back-Channel Logout 1.0 recommends so it is never taken for an ID token. */
export const LOGOUT_TOKEN_TYPE = 'logout+jwt';
/** A logout token is sent at once (and signed again on each retry): good for two minutes. */
export const LOGOUT_TOKEN_LIFETIME_SECONDS = 2 * 60;

/**
 * The claims of a logout token, exactly: who issued it, for which application, the session that ended
 * (`sid`, the ID token's) and its user (`sub`, the same pairwise subject), the back-channel logout
 * event, and never a `nonce`.
 */
export interface LogoutTokenClaims extends SessionTokenClaims {
  events: { [BACKCHANNEL_LOGOUT_EVENT]: Record<string, never> };
}

/** What the ID token signer signs: an ID token, or a logout token (told apart by its `events`). */
export type SignedTokenClaims = IdTokenClaims | LogoutTokenClaims;

/** A public signing key as the JWKS publishes it. */
export interface PublicSigningJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: typeof ID_TOKEN_ALG;
  use: 'sig';
}

/** Base64url without padding, as JWTs use it. */
export function base64url(data: Uint8Array | string): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * `base64url(header).base64url(claims)`: the bytes an ES256 signature covers. A logout token's header
 * says `typ: logout+jwt`, an ID token's `JWT`.
 */
export function jwtSigningInput(kid: string, claims: SignedTokenClaims): string {
  const header = { alg: ID_TOKEN_ALG, typ: 'events' in claims ? LOGOUT_TOKEN_TYPE : 'JWT', kid };
  return `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
}

/** The compact JWT: the signing input and the raw `r‖s` signature (64 bytes for ES256). */
export function compactJwt(signingInput: string, signature: Uint8Array): string {
  if (signature.length !== 64) throw new Error(`An ES256 signature is 64 bytes, got ${signature.length}`);
  return `${signingInput}.${base64url(signature)}`;
}
