import { describe, expect, it } from 'vitest';
import { eventSequence } from '#lib/domain/events';
import { toItem } from '#lib/dynamodb/sessions';
import { deriveEvents, eventId } from '#lib/events/derive';
import { storedSession } from '#test/support/fixtures';

const NOW = new Date('2026-01-02T00:00:00.000Z');
const base = storedSession({ bindToBrowser: true });
const item = (overrides: Parameters<typeof storedSession>[0] = {}) => toItem({ ...base, ...overrides });

describe('deriving session events from item changes', () => {
  it('an inserted session is session.created, at its creation, by the key that created it', () => {
    const [created, ...rest] = deriveEvents({ eventName: 'INSERT', newImage: item() }, NOW);
    expect(rest).toEqual([]);
    expect(created).toMatchObject({
      ownerUserId: base.createdByUserId,
      sessionId: base.id,
      boardId: base.boardId,
      event: {
        id: eventId(base.id, 'session.created'),
        type: 'session.created',
        occurredAt: base.createdAt,
        sequence: eventSequence('session.created'),
        data: { actor: { type: 'api_key', keyId: base.createdByKeyId } },
      },
    });
    expect(created?.event.data.session).toMatchObject({
      id: base.id,
      status: 'active',
      metadata: base.metadata,
    });
  });

  it('never carries a token hash, a binding hash or the binding secret', () => {
    const bound = item({ bindingHash: 'b'.repeat(64), boundAt: '2026-01-01T00:01:00.000Z' });
    const events = deriveEvents({ eventName: 'INSERT', newImage: bound }, NOW);
    const text = JSON.stringify(events);
    expect(text).not.toContain(base.tokenHash);
    expect(text).not.toContain('b'.repeat(64));
    expect(text).not.toMatch(/tokenHash|bindingHash/);
  });

  it('boundAt appearing is session.bound; openedAt appearing is session.opened', () => {
    const before = item();
    const after = {
      ...item({ bindingHash: 'b'.repeat(64), boundAt: '2026-01-01T00:01:00.000Z' }),
      openedAt: '2026-01-01T00:01:01.000Z',
    };
    const events = deriveEvents({ eventName: 'MODIFY', oldImage: before, newImage: after }, NOW);
    expect(events.map((e) => [e.event.type, e.event.occurredAt])).toEqual([
      ['session.bound', '2026-01-01T00:01:00.000Z'],
      ['session.opened', '2026-01-01T00:01:01.000Z'],
    ]);
  });

  it('a change that adds nothing new (a second load, an index attribute) derives nothing', () => {
    const opened = { ...item(), openedAt: '2026-01-01T00:01:01.000Z' };
    expect(deriveEvents({ eventName: 'MODIFY', oldImage: opened, newImage: { ...opened } }, NOW)).toEqual([]);
  });

  it.each([
    [
      { revokedByUserId: 'owner-1', revokedByKeyId: 'key_other' },
      { type: 'api_key', keyId: 'key_other' },
    ],
    [{ revokedByUserId: 'admin-cli', revokedByKeyId: null }, { type: 'operator' }],
    [{ revokedByUserId: 'org-member', revokedByKeyId: 'key_member' }, { type: 'board_organization' }],
  ])('revokedAt appearing is session.revoked with its actor (%o)', (by, actor) => {
    const revoked = item({ revokedAt: '2026-01-01T01:00:00.000Z', ...by });
    const [event, ...rest] = deriveEvents({ eventName: 'MODIFY', oldImage: item(), newImage: revoked }, NOW);
    expect(rest).toEqual([]);
    expect(event?.event).toMatchObject({
      type: 'session.revoked',
      occurredAt: '2026-01-01T01:00:00.000Z',
      data: { actor, session: { status: 'revoked' } },
    });
    expect(event?.event.data.actor).toEqual(actor);
  });

  it('the same change derived twice is the same events, whatever the clock says', () => {
    const change = { eventName: 'INSERT' as const, newImage: item() };
    expect(deriveEvents(change, NOW)).toEqual(deriveEvents(change, new Date('2030-01-01T00:00:00.000Z')));
  });

  it('a session removed after its expiry (TTL) and never revoked is session.expired; before it, nothing', () => {
    const removed = deriveEvents(
      { eventName: 'REMOVE', oldImage: item() },
      new Date('2026-02-01T00:00:00.000Z'),
    );
    expect(removed.map((e) => [e.event.type, e.event.occurredAt, e.event.data.session.status])).toEqual([
      ['session.expired', base.expiresAt, 'expired'],
    ]);
    expect(deriveEvents({ eventName: 'REMOVE', oldImage: item() }, NOW)).toEqual([]);
    const revoked = item({ revokedAt: '2026-01-01T01:00:00.000Z', revokedByUserId: 'owner-1' });
    expect(
      deriveEvents({ eventName: 'REMOVE', oldImage: revoked }, new Date('2026-02-01T00:00:00.000Z')),
    ).toEqual([]);
  });

  it('cut-off records in the sessions table are no sessions', () => {
    const cutoff = {
      id: 'cutoff#abc',
      cutoffScope: '["stage"]',
      'entry:x': { at: '2026-01-01T00:00:00.000Z' },
    };
    expect(deriveEvents({ eventName: 'INSERT', newImage: cutoff }, NOW)).toEqual([]);
  });

  it('event ids are fixed by session and type, and differ across either', () => {
    expect(eventId(base.id, 'session.created')).toBe(eventId(base.id, 'session.created'));
    expect(eventId(base.id, 'session.created')).not.toBe(eventId(base.id, 'session.opened'));
    expect(eventId(base.id, 'session.created')).not.toBe(eventId('other', 'session.created'));
    expect(eventId(base.id, 'session.created')).toMatch(/^evt_[0-9a-f]{32}$/);
  });
});
