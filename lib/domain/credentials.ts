import { createHash, timingSafeEqual } from 'node:crypto';
import type { RandomSource } from './ports';

/** Session tokens: 24 random bytes are exactly 32 base64url characters. */
const SESSION_TOKEN_BYTES = 24;
export const SESSION_TOKEN_LENGTH = 32;
const SESSION_TOKEN_FORMAT = /^[A-Za-z0-9_-]{32}$/;

/**
 * API keys carry a fixed prefix so secret scanners can recognise a leaked key, then 32 random bytes
 * (256 bits) as 43 base64url characters.
 */
export const API_KEY_PREFIX = 'esk_';
const API_KEY_BYTES = 32;
const API_KEY_FORMAT = /^esk_[A-Za-z0-9_-]{43}$/;

/** SHA-256 (hex) of a credential: the only form in which tokens and API keys are stored. */
export function hashCredential(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new 32-character URL-safe session token. */
export function newSessionToken(random: RandomSource): string {
  return random.bytes(SESSION_TOKEN_BYTES).toString('base64url');
}

/**
 * The id of the session a token opens: derived from the token (SHA-256, 128 bits of it, in the form of a
 * UUID of version 8, RFC 9562's custom kind), so the embed page reads the session by its key in one
 * consistent read, with no eventually consistent index to wait for and nothing to look up for a token
 * that opens nothing. The id reveals nothing of the token (a hash cannot be reversed), and the token's own
 * hash is still what the page checks.
 */
export function sessionIdOfToken(token: string): string {
  const digest = createHash('sha256').update(`session-id:${token}`, 'utf8').digest();
  digest[6] = ((digest[6] ?? 0) & 0x0f) | 0x80;
  digest[8] = ((digest[8] ?? 0) & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** True when `value` has the shape of a session token (checked before any lookup). */
export function isSessionTokenFormat(value: string): boolean {
  return SESSION_TOKEN_FORMAT.test(value);
}

/** A new API key with its public id; the key itself is shown once and stored only as a hash. */
export function newApiKey(random: RandomSource): { apiKey: string; keyId: string } {
  return {
    apiKey: API_KEY_PREFIX + random.bytes(API_KEY_BYTES).toString('base64url'),
    keyId: `key_${random.bytes(12).toString('hex')}`,
  };
}

/** True when `value` has the shape of an API key (checked before any lookup). */
export function isApiKeyFormat(value: string): boolean {
  return API_KEY_FORMAT.test(value);
}

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** The credential of an `Authorization: Bearer …` header, or undefined for any other value. */
export function bearerCredential(authorization: string | undefined): string | undefined {
  return BEARER.exec(authorization ?? '')?.[1];
}

/**
 * Binding secrets: what the embed page's binding cookie holds, 32 random bytes (256 bits) as 43 base64url
 * characters. One secret identifies one browser (in one site's cookie partition) across sessions.
 */
const BINDING_SECRET_BYTES = 32;
const BINDING_SECRET_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** A new binding secret, for a browser that brings none. */
export function newBindingSecret(random: RandomSource): string {
  return random.bytes(BINDING_SECRET_BYTES).toString('base64url');
}

/** True when `value` has the shape of a binding secret (anything else in the cookie is ignored). */
export function isBindingSecretFormat(value: string): boolean {
  return BINDING_SECRET_FORMAT.test(value);
}

/**
 * What a session stores of the secret it is bound to: the SHA-256 of the secret keyed with the session id,
 * so sessions bound by one browser store unrelated hashes and a copy of the table links none of them.
 */
export function bindingHash(sessionId: string, secret: string): string {
  return hashCredential(`${sessionId}:${secret}`);
}

/** Compares two hex hashes in constant time; false when either is missing or their lengths differ. */
export function sameHash(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
