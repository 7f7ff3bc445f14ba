/**
 * Errors that API Gateway produces itself, before or instead of a function, in the house
 * `{"error", "message"}` shape. Used by the CDK stack's gateway responses and by the local gateway.
 */
export type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'RESOURCE_NOT_FOUND'
  | 'REQUEST_TOO_LARGE'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'BAD_REQUEST_BODY'
  | 'BAD_REQUEST_PARAMETERS'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INVALID_API_KEY'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponse {
  status: number;
  message: string;
}

export const GATEWAY_RESPONSES: Record<GatewayResponseType, GatewayResponse> = {
  UNAUTHORIZED: { status: 401, message: 'The API key is missing or invalid' },
  ACCESS_DENIED: { status: 403, message: 'The API key is not allowed to call this operation' },
  // API Gateway reports an unknown route as a missing token; to a caller it is simply not found.
  MISSING_AUTHENTICATION_TOKEN: { status: 404, message: 'No such route' },
  RESOURCE_NOT_FOUND: { status: 404, message: 'No such route' },
  REQUEST_TOO_LARGE: { status: 413, message: 'The request is larger than the service accepts' },
  THROTTLED: { status: 429, message: 'Too many requests; slow down and retry' },
  QUOTA_EXCEEDED: { status: 429, message: 'Request quota exceeded' },
  // The authorizer itself failed (not a bad key): never let the request through, never blame the key.
  AUTHORIZER_FAILURE: { status: 503, message: 'Authorization is temporarily unavailable; retry shortly' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: 500, message: 'An unexpected error occurred' },
  INTEGRATION_FAILURE: { status: 502, message: 'An unexpected error occurred' },
  INTEGRATION_TIMEOUT: { status: 504, message: 'The request timed out' },
  BAD_REQUEST_BODY: { status: 400, message: 'Invalid request body' },
  BAD_REQUEST_PARAMETERS: { status: 400, message: 'Invalid request parameters' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  INVALID_API_KEY: { status: 401, message: 'The API key is missing or invalid' },
  DEFAULT_4XX: { status: 400, message: 'The request could not be processed' },
  DEFAULT_5XX: { status: 500, message: 'An unexpected error occurred' },
};
