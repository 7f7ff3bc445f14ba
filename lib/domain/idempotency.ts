import { createCipheriv, createDecipheriv, createHash, hkdfSync } from 'node:crypto';

/**
 * Idempotent creates, as Stripe and the IETF httpapi draft define them: a repeat of the same
 * Idempotency-Key by the same API key owner with the same body answers the stored response.
 */

/** How long a key is remembered. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
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

/**
 * One Idempotency-Key's record. A request holds it while in progress: the attempt that wrote or took it
 * over (`attemptId`, so a write of its own whose answer was lost is recognised as its own) until its lease
 * ends (`lockedUntilMs`: the end of that attempt's request budget, after which it writes no more and a
 * retry takes over). `reservation` is what the route fixed when the key was first claimed (a keyed create:
 * its session id and token), sealed like the response; every attempt of the key runs with it, so a re-run
 * meets its own earlier write instead of making another.
 */
export type IdempotencyRecord =
  | {
      state: 'IN_PROGRESS';
      fingerprint: string;
      attemptId?: string;
      lockedUntilMs: number;
      reservation?: string;
    }
  | { state: 'COMPLETE'; fingerprint: string; attemptId?: string; status: number; sealed: string };

/** What one attempt writes when it claims a key. */
export interface IdempotencyAttempt {
  fingerprint: string;
  /** A fresh random id per attempt (an SDK retry of the same write repeats it; a client retry does not). */
  attemptId: string;
  /** The end of this attempt's lease, epoch milliseconds. */
  leaseUntilMs: number;
  /** The sealed reservation this attempt proposes; a record that has one keeps its own. */
  reservation?: string;
}

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

/** Seals a claim's reservation (it may hold a session token) like a response, bound to its purpose. */
export function sealReservation(
  secrets: { apiKey: string; idempotencyKey: string; recordId: string },
  plaintext: string,
  iv: Buffer,
): string {
  return sealResponse(reservationSecrets(secrets), plaintext, iv);
}

/** The plaintext of `sealReservation`, or undefined when these secrets cannot open it. */
export function openSealedReservation(
  secrets: { apiKey: string; idempotencyKey: string; recordId: string },
  sealed: string,
): string | undefined {
  return openSealedResponse(reservationSecrets(secrets), sealed);
}

/** A reservation is authenticated as one (never accepted as a response, nor the other way round). */
function reservationSecrets<T extends { recordId: string }>(secrets: T): T {
  return { ...secrets, recordId: `${secrets.recordId}#reservation` };
}

function derivedKey(secrets: { apiKey: string; idempotencyKey: string }): Buffer {
  return Buffer.from(
    hkdfSync('sha256', secrets.apiKey, secrets.idempotencyKey, 'embed-session idempotent response v1', 32),
  );
}
