import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { KeyOwner } from '#lib/domain/api-key';
import { ValidationError } from '#lib/domain/errors';

const INVALID_CURSOR = 'cursor is invalid or was issued for another query';

/** The caller a cursor is issued to: its API key signs the cursor. */
export type CursorCaller = KeyOwner & { apiKey: string };

/**
 * What tells one listing's cursors from another's: its format version, positions and signing key, and
 * what of the query a cursor is bound to.
 */
export interface CursorFormat<Query> {
  readonly version: number;
  /** The one spelling of a position this listing issues. */
  readonly position: RegExp;
  /** HKDF salt and info deriving the signing key from the caller's API key. */
  readonly salt: string;
  readonly info: string;
  /** What a cursor is bound to besides the API key: every selecting parameter (not the page size). */
  readonly boundTo: (caller: KeyOwner, query: Query) => string;
}

/** HMAC-SHA256 of the cursor's content and the query it was issued for, under a key derived from the API key. */
function signature(format: CursorFormat<never>, payload: string, apiKey: string, query: string): Buffer {
  const key = Buffer.from(hkdfSync('sha256', apiKey, format.salt, format.info, 32));
  return createHmac('sha256', key).update(payload).update('\u0000').update(query).digest();
}

/** An opaque cursor: base64url JSON of the position, then its signature. */
export function encodeSignedCursor<Query>(
  format: CursorFormat<Query>,
  position: string,
  caller: CursorCaller,
  query: Query,
): string {
  return signedCursor(format, position, caller.apiKey, format.boundTo(caller, query));
}

function signedCursor(format: CursorFormat<never>, position: string, apiKey: string, query: string): string {
  const payload = Buffer.from(JSON.stringify({ v: format.version, p: position }), 'utf8').toString(
    'base64url',
  );
  return `${payload}.${signature(format, payload, apiKey, query).toString('base64url')}`;
}

/**
 * The position a cursor continues below. A cursor that is malformed, altered, or issued to another API
 * key or for another query is a 400: its signature does not match. So is one that is not exactly the
 * cursor the service issues for what it decodes to (the same bytes spelled otherwise, say): a cursor has
 * one spelling.
 */
export function decodeSignedCursor<Query>(
  format: CursorFormat<Query>,
  cursor: string,
  caller: CursorCaller,
  boundQuery: Query,
): string {
  const { apiKey } = caller;
  const query = format.boundTo(caller, boundQuery);
  const [payload, mac, ...rest] = cursor.split('.');
  if (!payload || !mac || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(payload + mac)) {
    throw new ValidationError(INVALID_CURSOR);
  }
  const expected = signature(format, payload, apiKey, query);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new ValidationError(INVALID_CURSOR);
  let decoded: { v?: unknown; p?: unknown } & Record<string, unknown>;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError(INVALID_CURSOR);
  }
  const { v, p, ...extra } = decoded ?? {};
  if (
    v !== format.version ||
    typeof p !== 'string' ||
    !format.position.test(p) ||
    Object.keys(extra).length > 0
  ) {
    throw new ValidationError(INVALID_CURSOR);
  }
  if (signedCursor(format, p, apiKey, query) !== cursor) throw new ValidationError(INVALID_CURSOR);
  return p;
}
