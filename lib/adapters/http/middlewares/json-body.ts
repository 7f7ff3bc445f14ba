import type middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { jsonSyntaxErrorOffset, lineAndColumn } from '#lib/adapters/http/json-syntax';
import { headerValue } from '#lib/adapters/http/response';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '#lib/domain/errors';

/** An API Gateway event whose body has been parsed into a plain JSON object. */
export type JsonBodyEvent = Omit<APIGatewayProxyEvent, 'body'> & { body: Record<string, unknown> };

const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

/**
 * Checks `Content-Type`, size and syntax of a JSON request body and replaces `event.body` with the
 * parsed object. Unlike middy's stock parser it answers malformed JSON with 400 (not 422) and
 * accepts only a JSON object, because that is this API's contract.
 */
export function jsonBody(options: { maxBytes: number }): middy.MiddlewareObj<APIGatewayProxyEvent> {
  return {
    before: (request) => {
      const event = request.event;
      const raw = boundedRawBody(event, options.maxBytes);
      const contentType = headerValue(event.headers, 'content-type') ?? '';
      if (!JSON_MEDIA_TYPE.test(contentType.trim())) {
        throw new UnsupportedMediaTypeError('Content-Type must be application/json');
      }
      if (raw.trim() === '') throw new ValidationError('Request body is empty; send a JSON object');
      let parsed: unknown;
      try {
        // JSON.parse defines "__proto__" as an own property, never as the prototype.
        parsed = JSON.parse(raw);
      } catch {
        throw new ValidationError(describeJsonError(raw));
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new ValidationError('Request body must be a JSON object');
      }
      (event as unknown as JsonBodyEvent).body = parsed as Record<string, unknown>;
    },
  };
}

/**
 * Where the body stops being JSON, as a position a caller can find in what they sent (never a quote of
 * it: the body may hold what should not be echoed).
 */
function describeJsonError(raw: string): string {
  const offset = jsonSyntaxErrorOffset(raw);
  if (offset === undefined) return 'Request body is not valid JSON';
  const { line, column } = lineAndColumn(raw, offset);
  const where = `line ${line}, column ${column} (position ${offset})`;
  return offset >= raw.length
    ? `Request body is not valid JSON: it ends too soon, at ${where}`
    : `Request body is not valid JSON: unexpected character at ${where}`;
}

/** The body as the client sent it (decoded when API Gateway passed it base64), within `maxBytes`. */
export function boundedRawBody(event: APIGatewayProxyEvent, maxBytes: number): string {
  const raw =
    event.body == null
      ? ''
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
  if (Buffer.byteLength(raw, 'utf8') > maxBytes) {
    throw new PayloadTooLargeError(`Request body must be at most ${maxBytes} bytes`);
  }
  return raw;
}
