/**
 * Errors that API Gateway produces itself, before or instead of a function, in the house
 * `{"error", "message"}` shape and with the house headers. The CDK stack configures them as gateway
 * responses and the local gateway answers with them, so the two cannot differ.
 */

import { API_HEADERS } from '#lib/adapters/http/response';
import { errorBody } from '#lib/adapters/http/status';
import { THROTTLED_RETRY_AFTER_SECONDS, UNAVAILABLE_RETRY_AFTER_SECONDS } from '#lib/domain/retry-after';

/** Every gateway response type API Gateway REST APIs have (AWS's list, complete at the time of writing). */
export type GatewayResponseType =
  | 'ACCESS_DENIED'
  | 'API_CONFIGURATION_ERROR'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'AUTHORIZER_FAILURE'
  | 'BAD_REQUEST_BODY'
  | 'BAD_REQUEST_PARAMETERS'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX'
  | 'EXPIRED_TOKEN'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'INVALID_API_KEY'
  | 'INVALID_SIGNATURE'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'QUOTA_EXCEEDED'
  | 'REQUEST_TOO_LARGE'
  | 'RESOURCE_NOT_FOUND'
  | 'THROTTLED'
  | 'UNAUTHORIZED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'WAF_FILTERED';

export interface GatewayResponse {
  status: number;
  message: string;
  /** Headers beyond the house ones (`Retry-After`). */
  headers?: Readonly<Record<string, string>>;
}

const NO_SUCH_ROUTE = 'No such route';
/** The 401s: how to send a key when none came, and that the one sent does not work. */
export const SEND_API_KEY = 'Send your API key as `Authorization: Bearer <key>`';
export const INVALID_KEY = 'The API key is invalid';
const BEARER_CHALLENGE = { 'WWW-Authenticate': 'Bearer' };
const UNEXPECTED = 'An unexpected error occurred';
const AUTHORIZATION_UNAVAILABLE: GatewayResponse = {
  status: 503,
  message: 'Authorization is temporarily unavailable; retry shortly',
  headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
};

/**
 * Every type is listed with an explicit status, because a status set on DEFAULT_4XX or DEFAULT_5XX
 * would otherwise replace the status of every unlisted type (a WAF block would turn into a 400).
 */
export const GATEWAY_RESPONSES: Readonly<Record<GatewayResponseType, GatewayResponse>> = {
  // No Authorization header (API Gateway answers before the authorizer runs), or one without a Bearer
  // credential (the authorizer throws `Unauthorized`): say how to send a key.
  UNAUTHORIZED: { status: 401, message: SEND_API_KEY, headers: BEARER_CHALLENGE },
  // A key the authorizer read and refused (malformed, unknown, revoked) is a Deny policy; the authorizer
  // allows every valid key the whole stage, so nothing else is denied.
  ACCESS_DENIED: { status: 401, message: INVALID_KEY, headers: BEARER_CHALLENGE },
  // A key without usage plan entry: a deployment mistake, but to the caller still a key that does not work.
  INVALID_API_KEY: { status: 401, message: INVALID_KEY, headers: BEARER_CHALLENGE },
  WAF_FILTERED: { status: 403, message: 'The request was blocked by the firewall' },
  // API Gateway answers a path that does not exist as a request without AWS signature: to clients of
  // the API-key and open routes, that is "no such route". An unsigned request to a provisioning route
  // (AWS_IAM) gets the same answer, since API Gateway cannot tell the two apart.
  MISSING_AUTHENTICATION_TOKEN: { status: 404, message: NO_SUCH_ROUTE },
  // A provisioning route's signature that does not verify (a wrong secret, an unknown access key id, a
  // tampered request) or whose credentials expired: API Gateway's own 403.
  INVALID_SIGNATURE: { status: 403, message: 'The request signature does not verify' },
  EXPIRED_TOKEN: { status: 403, message: 'The request was signed with expired credentials' },
  RESOURCE_NOT_FOUND: { status: 404, message: NO_SUCH_ROUTE },
  BAD_REQUEST_BODY: { status: 400, message: 'Invalid request body' },
  BAD_REQUEST_PARAMETERS: { status: 400, message: 'Invalid request parameters' },
  REQUEST_TOO_LARGE: { status: 413, message: 'The request is larger than the service accepts' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  THROTTLED: {
    status: 429,
    message: 'Too many requests; slow down and retry',
    headers: { 'Retry-After': String(THROTTLED_RETRY_AFTER_SECONDS) },
  },
  QUOTA_EXCEEDED: { status: 429, message: 'Request quota exceeded' },
  // The authorizer function itself crashed, timed out or could not be invoked (a refused key is
  // UNAUTHORIZED): never let the request through, and do not blame the key for what is our outage.
  AUTHORIZER_FAILURE: AUTHORIZATION_UNAVAILABLE,
  AUTHORIZER_CONFIGURATION_ERROR: AUTHORIZATION_UNAVAILABLE,
  API_CONFIGURATION_ERROR: { status: 500, message: UNEXPECTED },
  INTEGRATION_FAILURE: { status: 502, message: UNEXPECTED },
  INTEGRATION_TIMEOUT: { status: 504, message: 'The request timed out' },
  DEFAULT_4XX: { status: 400, message: 'The request could not be processed' },
  DEFAULT_5XX: { status: 500, message: UNEXPECTED },
};

export interface GatewayReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Status, headers and JSON body of a gateway-made error, as a client receives it. `securityHeaders` are
 * the ones every response of the API carries whatever its route (see `gatewaySecurityHeaders`).
 */
export function gatewayResponse(
  type: GatewayResponseType,
  securityHeaders: Readonly<Record<string, string>>,
): GatewayReply {
  const { status, message, headers } = GATEWAY_RESPONSES[type];
  return {
    status,
    headers: { ...API_HEADERS, ...securityHeaders, ...headers },
    body: JSON.stringify(errorBody(status, message)),
  };
}

/**
 * Headers for responses API Gateway makes itself. One set serves every route, and `/embed` is among them
 * (a throttled or oversized embed request is answered by the gateway), so they follow the embed page's
 * rules: the JSON body is sandboxed (no script, no form, an opaque origin), framing follows
 * `frame-ancestors`, and no Referer leaves. `sandbox` rather than `default-src 'none'`: API Gateway takes
 * header values as single-quoted literals, and a quote inside one is not something AWS documents.
 */
export function gatewaySecurityHeaders(frameAncestors: string): Record<string, string> {
  return {
    'Content-Security-Policy': `sandbox; frame-ancestors ${frameAncestors}`,
    'Referrer-Policy': 'no-referrer',
  };
}

/**
 * The 405 for a known path called with another method. API Gateway answers it from a mock integration
 * and the local gateway directly; both use this message and `Allow` header.
 */
export function methodNotAllowed(
  allowedMethods: readonly string[],
  securityHeaders: Readonly<Record<string, string>>,
): GatewayReply {
  const allow = [...new Set(allowedMethods)].sort().join(', ');
  return {
    status: 405,
    headers: { ...API_HEADERS, ...securityHeaders, Allow: allow },
    body: JSON.stringify(errorBody(405, `Method not allowed; this resource accepts ${allow}`)),
  };
}
