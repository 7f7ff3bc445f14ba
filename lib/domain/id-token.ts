/**
 * The ID token the embed page hands a board's own application: a JWT signed with ES256, in the shape any
 * OpenID Connect library verifies (issuer, audience, signature against the published keys, expiry). Pure:
 * the adapters behind `IdTokenSigner` sign what `jwtSigningInput` returns, each with its own key.
 */

/** The one algorithm: ECDSA on P-256 with SHA-256. */
export const ID_TOKEN_ALG = 'ES256';
/** A token is good for at most five minutes, and never past its session's expiry. */
export const ID_TOKEN_MAX_LIFETIME_SECONDS = 5 * 60;

/** The claims of an ID token, exactly; the board application's documentation lists them. */
export interface IdTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  user_id: string;
  email: string;
  given_name: string | null;
  family_name: string | null;
  picture: string | null;
  plan: string | null;
  metadata: Record<string, unknown>;
  board_id: string;
  board_name: string | null;
  sid: string;
  iat: number;
  exp: number;
  jti: string;
}

/** The claims discovery announces (`claims_supported`), in the order of `IdTokenClaims`. */
export const ID_TOKEN_CLAIMS: readonly (keyof IdTokenClaims)[] = [
  'iss',
  'aud',
  'sub',
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
  'jti',
];

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

/** `base64url(header).base64url(claims)`: the bytes an ES256 signature covers. */
export function jwtSigningInput(kid: string, claims: IdTokenClaims): string {
  const header = { alg: ID_TOKEN_ALG, typ: 'JWT', kid };
  return `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
}

/** The compact JWT: the signing input and the raw `r‖s` signature (64 bytes for ES256). */
export function compactJwt(signingInput: string, signature: Uint8Array): string {
  if (signature.length !== 64) throw new Error(`An ES256 signature is 64 bytes, got ${signature.length}`);
  return `${signingInput}.${base64url(signature)}`;
}
