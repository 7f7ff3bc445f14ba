import type { APIGatewayProxyResult } from 'aws-lambda';
import { ID_TOKEN_ALG, ID_TOKEN_CLAIMS, type PublicSigningJwk } from '#lib/domain/id-token';

/** The two discovery paths, under the issuer (the service's public base URL). */
export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * How long browsers, CDNs and board applications may keep either document. Five minutes: a rotation
 * publishes the next key at least this long before it signs (docs/operations.md).
 */
export const DISCOVERY_MAX_AGE_SECONDS = 300;

/**
 * The OpenID Connect discovery document: enough for any OIDC library to verify the ID tokens the embed
 * page hands board applications, given only the issuer. The service issues ID tokens and nothing else,
 * so there is no authorization endpoint; `response_types_supported` says what it hands out. Logout tokens
 * are signed by the same keys.
 */
export function openIdConfiguration(issuer: string) {
  return {
    issuer,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    response_types_supported: ['id_token'],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: [ID_TOKEN_ALG],
    claims_supported: [...ID_TOKEN_CLAIMS],
    // Back-Channel Logout 1.0: a board with a `logoutUrl` is sent a logout token, naming the `sid`, when
    // one of its sessions is revoked or expires.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  };
}

/** A public, cacheable JSON answer that any origin may read. */
export function discoveryResponse(body: unknown): APIGatewayProxyResult {
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'application/json',
      'Cache-Control': `public, max-age=${DISCOVERY_MAX_AGE_SECONDS}`,
      'Access-Control-Allow-Origin': '*',
      'X-Content-Type-Options': 'nosniff',
    },
    body: JSON.stringify(body),
  };
}

/** The JWKS: every key that verifies tokens still in circulation. */
export function jwks(keys: readonly PublicSigningJwk[]) {
  return { keys };
}
