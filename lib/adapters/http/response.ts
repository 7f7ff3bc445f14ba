import type { APIGatewayProxyResult } from 'aws-lambda';
import { errorBody } from './status';

/**
 * Headers on every API response: the bodies carry credentials (session tokens), so nothing may be
 * stored by a browser or a shared proxy.
 */
export const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
});

/** A JSON API Gateway proxy result with the house headers. */
export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return { statusCode, headers: { ...API_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** A result without a body (a 204), with the house headers but no Content-Type. */
export function emptyResponse(statusCode: number): APIGatewayProxyResult {
  const { 'Content-Type': _type, ...headers } = API_HEADERS;
  return { statusCode, headers, body: '' };
}

/** A JSON error result in the `{error, message}` shape. */
export function jsonError(
  statusCode: number,
  message: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return jsonResponse(statusCode, errorBody(statusCode, message), headers);
}

/** Case-insensitive header lookup: API Gateway passes header names as the client sent them. */
export function headerValue(
  headers: Record<string, string | undefined> | null | undefined,
  name: string,
): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === wanted) return headers[key];
  }
  return undefined;
}
