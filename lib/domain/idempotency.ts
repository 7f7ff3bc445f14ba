import { createCipheriv, createDecipheriv, createHash, hkdfSync } from 'node:crypto';

/**
 * Idempotent creates, as Stripe and the IETF httpapi draft define them: a repeat of the same
 * Idempotency-Key by the same API key owner with the same body answers the stored response.
 */

/** How long a key is remembered. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * How long a request in progress holds its key. Longer than a function can run (its timeout), so a key
 * is never taken over from a request still running, and a crashed one frees it soon after.
 */
export const IDEMPOTENCY_LOCK_SECONDS = 30;

const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

/** True for an Idempotency-Key the API accepts: 1–255 printable ASCII characters, no spaces. */
export function isIdempotencyKey(value: string): boolean {
  return KEY_FORMAT.test(value);
}

/** The record's id: the key owner and the Idempotency-Key, so two owners' keys never collide. */
export function idempotencyRecordId(ownerUserId: string, idempotencyKey: string): string {
  return createHash('sha256')
    .update(JSON.stringify(['idempotency', ownerUserId, idempotencyKey]))
    .digest('hex');
}

/** The fingerprint of a request body: a repeat must send exactly the same bytes. */
export function requestFingerprint(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

/** What is remembered of a completed request. */
export interface IdempotentResponse {
  status: number;
  body: string;
}

export type IdempotencyRecord =
  | { state: 'IN_PROGRESS'; fingerprint: string; lockedUntilMs: number }
  | { state: 'COMPLETE'; fingerprint: string; status: number; sealed: string };

/**
 * Encrypts a response body (it holds the session token) with AES-256-GCM under a key derived by HKDF
 * from the caller's API key and the Idempotency-Key, bound to the record id. Only a request with the same
 * API key and Idempotency-Key can open it; a copy of the table yields nothing usable.
 */
export function sealResponse(
  secrets: { apiKey: string; idempotencyKey: string; recordId: string },
  plaintext: string,
  iv: Buffer,
): string {
  const cipher = createCipheriv('aes-256-gcm', derivedKey(secrets), iv);
  cipher.setAAD(Buffer.from(secrets.recordId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
}

/** The plaintext of `sealResponse`, or undefined when these secrets cannot open it (another API key). */
export function openSealedResponse(
  secrets: { apiKey: string; idempotencyKey: string; recordId: string },
  sealed: string,
): string | undefined {
  const [iv, ciphertext, tag] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !ciphertext || !tag) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', derivedKey(secrets), iv);
    decipher.setAAD(Buffer.from(secrets.recordId, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

function derivedKey(secrets: { apiKey: string; idempotencyKey: string }): Buffer {
  return Buffer.from(
    hkdfSync('sha256', secrets.apiKey, secrets.idempotencyKey, 'embed-session idempotent response v1', 32),
  );
}
