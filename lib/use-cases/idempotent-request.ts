import { IdempotencyConflictError, IdempotencyKeyReusedError } from '#lib/domain/errors';
import {
  type IdempotentResponse,
  idempotencyRecordId,
  openSealedResponse,
  requestFingerprint,
  sealResponse,
} from '#lib/domain/idempotency';
import type { Clock, IdempotencyRepository, RandomSource } from '#lib/domain/ports';

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
}

/** A claimed key: the request runs, then `finishIdempotentRequest` stores (or forgets) its answer. */
export interface IdempotencyClaim {
  recordId: string;
  fingerprint: string;
  secrets: { apiKey: string; idempotencyKey: string; recordId: string };
}

/**
 * Claims the Idempotency-Key for this request, or answers the stored response of the earlier one: `409`
 * while that one is still running, `422` when it had another body or another API key.
 */
export async function claimIdempotencyKey(
  deps: IdempotencyDeps,
  request: IdempotentRequest,
): Promise<{ claim: IdempotencyClaim } | { replay: IdempotentResponse }> {
  const recordId = idempotencyRecordId(request.ownerUserId, request.idempotencyKey);
  const fingerprint = requestFingerprint(request.body);
  const secrets = { apiKey: request.apiKey, idempotencyKey: request.idempotencyKey, recordId };
  const outcome = await deps.idempotency.claim(recordId, fingerprint, deps.clock.now());
  if (outcome.claimed) return { claim: { recordId, fingerprint, secrets } };
  const { record } = outcome;
  if (record.fingerprint !== fingerprint) {
    throw new IdempotencyKeyReusedError('This Idempotency-Key was already used with another request body');
  }
  if (record.state === 'IN_PROGRESS') throw new IdempotencyConflictError();
  const body = openSealedResponse(secrets, record.sealed);
  if (body === undefined) {
    throw new IdempotencyKeyReusedError(
      'This Idempotency-Key was already used with another of your API keys',
    );
  }
  return { replay: { status: record.status, body } };
}

/**
 * Stores the answer of a claimed request for replay, encrypted; a 5xx is forgotten instead, so a retry
 * runs the request again.
 */
export async function finishIdempotentRequest(
  deps: IdempotencyDeps,
  claim: IdempotencyClaim,
  response: IdempotentResponse,
): Promise<void> {
  if (response.status >= 500) {
    await deps.idempotency.release(claim.recordId, claim.fingerprint);
    return;
  }
  const sealed = sealResponse(claim.secrets, response.body, deps.random.bytes(12));
  await deps.idempotency.complete(claim.recordId, claim.fingerprint, { status: response.status, sealed });
}
