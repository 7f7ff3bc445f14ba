import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError, IdempotencyKeyReusedError } from '#lib/domain/errors';
import {
  type IdempotencyAttempt,
  type IdempotencyRecord,
  idempotencyRecordId,
  isIdempotencyKey,
  openSealedResponse,
  sealResponse,
} from '#lib/domain/idempotency';
import type { IdempotencyRepository } from '#lib/domain/ports';
import { claimIdempotencyKey, finishIdempotentRequest } from '#lib/use-cases/idempotent-request';
import { fixedClock, sequenceRandom } from '#test/support/fakes';

/**
 * Records in memory, written the way the conditional writes write them. `loseNextAnswer` makes the next
 * write land and then fail, as a write whose answer DynamoDB lost does after the SDK's retries.
 */
class MemoryRecords implements IdempotencyRepository {
  readonly records = new Map<string, IdempotencyRecord>();
  loseNextAnswer = false;
  async create(id: string, attempt: IdempotencyAttempt) {
    if (this.records.has(id)) return false;
    this.records.set(id, {
      state: 'IN_PROGRESS',
      fingerprint: attempt.fingerprint,
      attemptId: attempt.attemptId,
      lockedUntilMs: attempt.leaseUntilMs,
      ...(attempt.reservation !== undefined ? { reservation: attempt.reservation } : {}),
    });
    return this.answer(true);
  }
  async get(id: string) {
    return structuredClone(this.records.get(id));
  }
  async takeOver(id: string, attempt: IdempotencyAttempt, now: Date) {
    const record = this.records.get(id);
    if (
      record?.state !== 'IN_PROGRESS' ||
      record.fingerprint !== attempt.fingerprint ||
      record.lockedUntilMs >= now.getTime()
    ) {
      return undefined;
    }
    record.attemptId = attempt.attemptId;
    record.lockedUntilMs = attempt.leaseUntilMs;
    record.reservation ??= attempt.reservation;
    return this.answer(record.reservation === undefined ? {} : { reservation: record.reservation });
  }
  async complete(id: string, attemptId: string, response: { status: number; sealed: string }) {
    const record = this.records.get(id);
    if (record?.attemptId !== attemptId) return false;
    this.records.set(id, { state: 'COMPLETE', fingerprint: record.fingerprint, attemptId, ...response });
    return true;
  }
  async release(id: string, attemptId: string) {
    const record = this.records.get(id);
    if (record?.state === 'IN_PROGRESS' && record.attemptId === attemptId) record.lockedUntilMs = 0;
  }
  private answer<T>(value: T): T {
    if (!this.loseNextAnswer) return value;
    this.loseNextAnswer = false;
    // The write landed; the SDK's retry met it and was refused by the condition.
    return (typeof value === 'boolean' ? false : undefined) as T;
  }
}

const NOW = '2026-01-01T00:00:00.000Z';
const LEASE_MS = 5_000;
const deps = (iso = NOW) => ({
  idempotency: new MemoryRecords(),
  clock: fixedClock(iso),
  random: sequenceRandom(),
});
const request = (overrides: Partial<Parameters<typeof claimIdempotencyKey>[1]> = {}) => ({
  ownerUserId: 'owner-1',
  apiKey: `esk_${'a'.repeat(43)}`,
  idempotencyKey: 'order-42',
  body: '{"boardId":"b"}',
  leaseMs: LEASE_MS,
  ...overrides,
});
/** A later moment on the same records: another attempt, after `ms`. */
const later = (d: ReturnType<typeof deps>, ms: number) => ({
  ...d,
  clock: fixedClock(new Date(Date.parse(NOW) + ms).toISOString()),
});
let reservations = 0;
const reserve = () => `reservation-${++reservations}`;

async function claimOf(d: Parameters<typeof claimIdempotencyKey>[0], r = request()) {
  const outcome = await claimIdempotencyKey(d, r);
  if (!('claim' in outcome)) throw new Error('expected a claim');
  return outcome.claim;
}

/** What a claim of a key whose request was answered 201 with `body` returns: that answer, to replay. */
const replayOf = (body: string) => ({ replay: { status: 201, body } });

describe('Idempotency-Key', () => {
  it.each([
    ['a', true],
    ['x'.repeat(255), true],
    ['~!#$%&()*+,-./:;<=>?@[]^_`{|}', true],
    ['', false],
    ['x'.repeat(256), false],
    ['has space', false],
    ['tab\t', false],
    ['é', false],
  ])('accepts %j: %s', (key, ok) => {
    expect(isIdempotencyKey(key)).toBe(ok);
  });

  it('keeps two owners’ keys apart', () => {
    expect(idempotencyRecordId('owner-1', 'k')).not.toBe(idempotencyRecordId('owner-2', 'k'));
    expect(idempotencyRecordId('a', 'bc')).not.toBe(idempotencyRecordId('ab', 'c'));
  });
});

describe('sealed responses', () => {
  const secrets = { apiKey: 'esk_one', idempotencyKey: 'k', recordId: 'r' };
  const sealed = sealResponse(secrets, '{"sessionToken":"secret-token"}', Buffer.alloc(12, 7));

  it('hold nothing of the token in clear', () => {
    expect(sealed).not.toContain('secret-token');
    expect(Buffer.from(sealed.split('.')[1] ?? '', 'base64url').toString()).not.toContain('secret');
  });

  it('open only with the same API key, Idempotency-Key and record', () => {
    expect(openSealedResponse(secrets, sealed)).toBe('{"sessionToken":"secret-token"}');
    expect(openSealedResponse({ ...secrets, apiKey: 'esk_two' }, sealed)).toBeUndefined();
    expect(openSealedResponse({ ...secrets, idempotencyKey: 'k2' }, sealed)).toBeUndefined();
    expect(openSealedResponse({ ...secrets, recordId: 'other' }, sealed)).toBeUndefined();
    expect(openSealedResponse(secrets, `${sealed.slice(0, -2)}AA`)).toBeUndefined();
    expect(openSealedResponse(secrets, 'garbage')).toBeUndefined();
  });
});

describe('claimIdempotencyKey and finishIdempotentRequest', () => {
  it('claims a new key, stores the answer sealed, and replays it for the same body', async () => {
    const d = deps();
    const first = await claimOf(d);
    await finishIdempotentRequest(d, first, { status: 201, body: '{"sessionToken":"tok"}' });
    const stored = [...d.idempotency.records.values()][0];
    expect(stored).toMatchObject({ state: 'COMPLETE', status: 201 });
    expect(JSON.stringify(stored)).not.toContain('tok"');
    await expect(claimIdempotencyKey(d, request())).resolves.toEqual(replayOf('{"sessionToken":"tok"}'));
  });

  it('answers 422 for the same key with another body, and for another API key of the same owner', async () => {
    const d = deps();
    const first = await claimOf(d);
    await finishIdempotentRequest(d, first, { status: 201, body: '{}' });
    await expect(claimIdempotencyKey(d, request({ body: '{"boardId":"c"}' }))).rejects.toThrow(
      new IdempotencyKeyReusedError('This Idempotency-Key was already used with another request body'),
    );
    await expect(claimIdempotencyKey(d, request({ apiKey: `esk_${'b'.repeat(43)}` }))).rejects.toThrow(
      new IdempotencyKeyReusedError('This Idempotency-Key was already used with another of your API keys'),
    );
  });

  it('answers 409 while the first request is still in progress', async () => {
    const d = deps();
    await claimIdempotencyKey(d, request());
    await expect(claimIdempotencyKey(d, request())).rejects.toThrow(IdempotencyConflictError);
  });

  it('never collides across owners', async () => {
    const d = deps();
    await claimIdempotencyKey(d, request());
    await expect(claimIdempotencyKey(d, request({ ownerUserId: 'owner-2' }))).resolves.toHaveProperty(
      'claim',
    );
  });

  it('stores a 4xx for replay, but not a 5xx: a retry runs again at once, with the same reservation', async () => {
    const d = deps();
    const bad = await claimOf(d, request({ idempotencyKey: 'k-400' }));
    await finishIdempotentRequest(d, bad, { status: 404, body: '{"error":"Not Found"}' });
    await expect(claimIdempotencyKey(d, request({ idempotencyKey: 'k-400' }))).resolves.toHaveProperty(
      'replay',
    );
    const failed = await claimOf(d, request({ idempotencyKey: 'k-503', reserve }));
    await finishIdempotentRequest(d, failed, { status: 503, body: '{}' });
    const retry = await claimOf(d, request({ idempotencyKey: 'k-503', reserve }));
    expect(retry.attemptId).not.toBe(failed.attemptId);
    expect(retry.reservation).toBe(failed.reservation);
  });

  it('recognises its own claim when the answer to its write was lost', async () => {
    const d = deps();
    d.idempotency.loseNextAnswer = true;
    const claim = await claimOf(d, request({ reserve }));
    const stored = d.idempotency.records.get(claim.recordId);
    expect(stored).toMatchObject({ state: 'IN_PROGRESS', attemptId: claim.attemptId });
    await finishIdempotentRequest(d, claim, { status: 201, body: '{"ok":1}' });
    await expect(claimIdempotencyKey(d, request())).resolves.toEqual(replayOf('{"ok":1}'));
  });

  it('holds the key for the lease, answering 409 with the seconds left, then lets a retry take over', async () => {
    const d = deps();
    const first = await claimOf(d, request({ reserve }));
    expect(d.idempotency.records.get(first.recordId)).toMatchObject({
      lockedUntilMs: Date.parse(NOW) + LEASE_MS,
    });
    const early = claimIdempotencyKey(later(d, 1_200), request({ reserve }));
    await expect(early).rejects.toThrow(IdempotencyConflictError);
    await expect(early).rejects.toMatchObject({ retryAfterSeconds: 4 });
    const retry = await claimOf(later(d, LEASE_MS + 1), request({ reserve }));
    expect(retry.attemptId).not.toBe(first.attemptId);
    // The retry runs with what the first attempt fixed, so it meets that attempt's writes.
    expect(retry.reservation).toBe(first.reservation);
    expect(first.reservation).toMatch(/^reservation-/);
  });

  it('recognises its own take-over when the answer to it was lost', async () => {
    const d = deps();
    const first = await claimOf(d, request({ reserve }));
    d.idempotency.loseNextAnswer = true;
    const retry = await claimOf(later(d, LEASE_MS + 1), request({ reserve }));
    expect(d.idempotency.records.get(retry.recordId)).toMatchObject({ attemptId: retry.attemptId });
    expect(retry.reservation).toBe(first.reservation);
  });

  it('stores no answer for an attempt that was taken over: the retry that holds the key stores its own', async () => {
    const d = deps();
    const first = await claimOf(d, request());
    const retry = await claimOf(later(d, LEASE_MS + 1), request());
    await finishIdempotentRequest(d, first, { status: 201, body: '{"from":"first"}' });
    expect(d.idempotency.records.get(first.recordId)?.state).toBe('IN_PROGRESS');
    await finishIdempotentRequest(d, retry, { status: 201, body: '{"from":"retry"}' });
    await expect(claimIdempotencyKey(d, request())).resolves.toEqual(replayOf('{"from":"retry"}'));
  });

  it('keeps the reservation sealed: another API key of the owner cannot take it over', async () => {
    const d = deps();
    const first = await claimOf(d, request({ reserve }));
    const sealed = d.idempotency.records.get(first.recordId);
    expect(JSON.stringify(sealed)).not.toContain(first.reservation);
    await expect(
      claimIdempotencyKey(later(d, LEASE_MS + 1), request({ reserve, apiKey: `esk_${'b'.repeat(43)}` })),
    ).rejects.toThrow(IdempotencyKeyReusedError);
    // Refused without taking the key over: the first attempt's API key still can, at once.
    expect(d.idempotency.records.get(first.recordId)).toMatchObject({ attemptId: first.attemptId });
    const retry = await claimOf(later(d, LEASE_MS + 1), request({ reserve }));
    expect(retry.reservation).toBe(first.reservation);
  });

  it('refuses another body even once the earlier attempt’s lease has ended', async () => {
    const d = deps();
    await claimOf(d, request());
    await expect(
      claimIdempotencyKey(later(d, LEASE_MS + 1), request({ body: '{"boardId":"other"}' })),
    ).rejects.toThrow(IdempotencyKeyReusedError);
  });
});
