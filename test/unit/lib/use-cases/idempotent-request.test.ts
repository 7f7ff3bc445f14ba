import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError, IdempotencyKeyReusedError } from '#lib/domain/errors';
import {
  type IdempotencyRecord,
  idempotencyRecordId,
  isIdempotencyKey,
  openSealedResponse,
  sealResponse,
} from '#lib/domain/idempotency';
import type { IdempotencyRepository } from '#lib/domain/ports';
import { claimIdempotencyKey, finishIdempotentRequest } from '#lib/use-cases/idempotent-request';
import { fixedClock, sequenceRandom } from '#test/support/fakes';

/** Records in memory, claimed the way the conditional write claims them. */
class MemoryRecords implements IdempotencyRepository {
  readonly records = new Map<string, IdempotencyRecord>();
  async claim(id: string, fingerprint: string, now: Date) {
    const existing = this.records.get(id);
    if (existing && !(existing.state === 'IN_PROGRESS' && existing.lockedUntilMs < now.getTime())) {
      return { claimed: false as const, record: existing };
    }
    this.records.set(id, { state: 'IN_PROGRESS', fingerprint, lockedUntilMs: now.getTime() + 30_000 });
    return { claimed: true as const };
  }
  async complete(id: string, fingerprint: string, response: { status: number; sealed: string }) {
    this.records.set(id, { state: 'COMPLETE', fingerprint, ...response });
  }
  async release(id: string) {
    this.records.delete(id);
  }
}

const NOW = '2026-01-01T00:00:00.000Z';
const deps = () => ({ idempotency: new MemoryRecords(), clock: fixedClock(NOW), random: sequenceRandom() });
const request = (overrides: Partial<Parameters<typeof claimIdempotencyKey>[1]> = {}) => ({
  ownerUserId: 'owner-1',
  apiKey: `esk_${'a'.repeat(43)}`,
  idempotencyKey: 'order-42',
  body: '{"boardId":"b"}',
  ...overrides,
});

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
    const first = await claimIdempotencyKey(d, request());
    if (!('claim' in first)) throw new Error('expected a claim');
    await finishIdempotentRequest(d, first.claim, { status: 201, body: '{"sessionToken":"tok"}' });
    const stored = [...d.idempotency.records.values()][0];
    expect(stored).toMatchObject({ state: 'COMPLETE', status: 201 });
    expect(JSON.stringify(stored)).not.toContain('tok"');
    await expect(claimIdempotencyKey(d, request())).resolves.toEqual({
      replay: { status: 201, body: '{"sessionToken":"tok"}' },
    });
  });

  it('answers 422 for the same key with another body, and for another API key of the same owner', async () => {
    const d = deps();
    const first = await claimIdempotencyKey(d, request());
    if (!('claim' in first)) throw new Error('expected a claim');
    await finishIdempotentRequest(d, first.claim, { status: 201, body: '{}' });
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

  it('stores a 4xx for replay, but forgets a 5xx so that a retry runs again', async () => {
    const d = deps();
    const bad = await claimIdempotencyKey(d, request({ idempotencyKey: 'k-400' }));
    if (!('claim' in bad)) throw new Error('expected a claim');
    await finishIdempotentRequest(d, bad.claim, { status: 404, body: '{"error":"Not Found"}' });
    await expect(claimIdempotencyKey(d, request({ idempotencyKey: 'k-400' }))).resolves.toHaveProperty(
      'replay',
    );
    const failed = await claimIdempotencyKey(d, request({ idempotencyKey: 'k-503' }));
    if (!('claim' in failed)) throw new Error('expected a claim');
    await finishIdempotentRequest(d, failed.claim, { status: 503, body: '{}' });
    expect(d.idempotency.records.has(idempotencyRecordId('owner-1', 'k-503'))).toBe(false);
    await expect(claimIdempotencyKey(d, request({ idempotencyKey: 'k-503' }))).resolves.toHaveProperty(
      'claim',
    );
  });
});
