import { IdempotencyConflictError, IdempotencyKeyReusedError } from '#lib/domain/errors';
import {
  type IdempotencyAttempt,
  type IdempotentResponse,
  idempotencyRecordId,
  openSealedReservation,
  openSealedResponse,
  requestFingerprint,
  sealReservation,
  sealResponse,
} from '#lib/domain/idempotency';
import type { Clock, IdempotencyRepository, RandomSource } from '#lib/domain/ports';
import { MIN_RETRY_AFTER_SECONDS, retryAfterSeconds } from '#lib/domain/retry-after';

export interface IdempotencyDeps {
  idempotency: IdempotencyRepository;
  clock: Clock;
  random: RandomSource;
}

export interface IdempotentRequest {
  ownerUserId: string;
  /** The caller's API key: what the stored response is encrypted under, with the Idempotency-Key. */
  apiKey: string;
  idempotencyKey: string;
  body: string;
  /**
   * How long this attempt may hold the key: no longer than its request budget, after which it writes
   * nothing more, so that a retry may take over without two attempts writing at once.
   */
  leaseMs: number;
  /**
   * What the route fixes when the key is first claimed (a keyed create: its session id and token), as
   * text; every attempt of this key then runs with the first attempt's, so a re-run meets its own writes.
   */
  reserve?: () => string;
}

/** A claimed key: the request runs, then `finishIdempotentRequest` stores (or forgets) its answer. */
export interface IdempotencyClaim {
  recordId: string;
  attemptId: string;
  secrets: { apiKey: string; idempotencyKey: string; recordId: string };
  /** The key's reservation (what `reserve` made, this attempt's or the first attempt's). */
  reservation?: string;
}

/** Claims, replays and reads before giving up: enough for two other attempts changing the record meanwhile. */
const CLAIM_ROUNDS = 3;

/**
 * Claims the Idempotency-Key for this request, or answers the stored response of the earlier one: `409`
 * (with the seconds until its lease ends) while an earlier attempt still holds it, `422` when it had
 * another body or another API key. An attempt whose own claim was written but its answer lost (the SDK's
 * retry is then refused by the condition) recognises the record as its own and goes on.
 */
export async function claimIdempotencyKey(
  deps: IdempotencyDeps,
  request: IdempotentRequest,
): Promise<{ claim: IdempotencyClaim } | { replay: IdempotentResponse }> {
  const recordId = idempotencyRecordId(request.ownerUserId, request.idempotencyKey);
  const secrets = { apiKey: request.apiKey, idempotencyKey: request.idempotencyKey, recordId };
  const now = deps.clock.now();
  const attempt: IdempotencyAttempt = {
    fingerprint: requestFingerprint(request.body),
    attemptId: deps.random.uuid(),
    leaseUntilMs: now.getTime() + request.leaseMs,
    ...(request.reserve
      ? { reservation: sealReservation(secrets, request.reserve(), deps.random.bytes(12)) }
      : {}),
  };
  const claimed = (reservation: string | undefined) => {
    const claim: IdempotencyClaim = { recordId, attemptId: attempt.attemptId, secrets };
    if (reservation === undefined) return { claim };
    const opened = openSealedReservation(secrets, reservation);
    if (opened === undefined) throw anotherApiKey();
    return { claim: { ...claim, reservation: opened } };
  };

  for (let round = 0; round < CLAIM_ROUNDS; round++) {
    if (await deps.idempotency.create(recordId, attempt, now)) return claimed(attempt.reservation);
    const record = await deps.idempotency.get(recordId, now);
    // Gone since (past its 24 hours): claim it afresh.
    if (!record) continue;
    if (record.fingerprint !== attempt.fingerprint) {
      throw new IdempotencyKeyReusedError('This Idempotency-Key was already used with another request body');
    }
    if (record.state === 'COMPLETE') {
      const body = openSealedResponse(secrets, record.sealed);
      if (body === undefined) throw anotherApiKey();
      return { replay: { status: record.status, body } };
    }
    // Our own claim or take-over, written though its answer was lost.
    if (record.attemptId === attempt.attemptId) return claimed(record.reservation);
    if (record.lockedUntilMs > now.getTime()) {
      throw new IdempotencyConflictError(retryAfterSeconds(record.lockedUntilMs - now.getTime()));
    }
    // Another API key of the owner cannot open what the key fixed: refuse before taking anything over.
    if (
      record.reservation !== undefined &&
      openSealedReservation(secrets, record.reservation) === undefined
    ) {
      throw anotherApiKey();
    }
    const taken = await deps.idempotency.takeOver(recordId, attempt, now);
    if (taken) return claimed(taken.reservation);
    // Someone else took it over first, or our take-over landed unanswered: read again.
  }
  throw new IdempotencyConflictError(MIN_RETRY_AFTER_SECONDS);
}

/**
 * Stores the answer of a claimed request for replay, encrypted; a 5xx is not stored: the attempt's lease
 * ends at once, so a retry runs the request again (with the same reservation).
 */
export async function finishIdempotentRequest(
  deps: IdempotencyDeps,
  claim: IdempotencyClaim,
  response: IdempotentResponse,
): Promise<void> {
  if (response.status >= 500) {
    await deps.idempotency.release(claim.recordId, claim.attemptId);
    return;
  }
  const sealed = sealResponse(claim.secrets, response.body, deps.random.bytes(12));
  // Not stored when a retry took the key over meanwhile: that retry stores its own answer, which is the
  // same request's with the same reservation.
  await deps.idempotency.complete(claim.recordId, claim.attemptId, { status: response.status, sealed });
}

function anotherApiKey(): IdempotencyKeyReusedError {
  return new IdempotencyKeyReusedError('This Idempotency-Key was already used with another of your API keys');
}
