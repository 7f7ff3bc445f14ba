import { describe, expect, it } from 'vitest';
import {
  cutoffFanOuts,
  deriveEvents,
  OPERATOR_USER_ID,
  revokeAllEventId,
} from '#lib/adapters/dynamodb/change-events';
import { toItem } from '#lib/adapters/dynamodb/session-items';
import { eventSequence, type RoutedEvent, type RoutedSessionEvent } from '#lib/domain/events';
import { eventId } from '#lib/domain/session-events';
import { storedSession } from '#test/support/fixtures';

const NOW = new Date('2026-01-02T00:00:00.000Z');
const base = storedSession({ bindToBrowser: true });
/** The session events among derived ones (a revoke-all's names no session). */
const ofSessions = (events: RoutedEvent[]): RoutedSessionEvent[] =>
  events.flatMap((routed) => (routed.sessionId !== null ? [routed] : []));
const item = (overrides: Parameters<typeof storedSession>[0] = {}) => toItem({ ...base, ...overrides });

describe('deriving session events from item changes', () => {
  it('an inserted session is session.created, at its creation, by the key that created it', () => {
    const [created, ...rest] = ofSessions(deriveEvents({ eventName: 'INSERT', newImage: item() }, NOW));
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
    const removed = ofSessions(
      deriveEvents({ eventName: 'REMOVE', oldImage: item() }, new Date('2026-02-01T00:00:00.000Z')),
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

describe('deriving sessions.revoked from revocation cut-off records', () => {
  const AT_FIRST = '2026-01-03T00:00:00.000Z';
  const AT_LAST = '2026-01-03T00:00:00.250Z';
  const record = (entries: Record<string, unknown>) => ({
    id: 'cutoff#0f0f',
    cutoffScope: '["creatorUser","owner-1","customer-1"]',
    ...entries,
  });
  const first = { 'entry:first': { at: AT_FIRST, byUserId: 'owner-1', byKeyId: 'key_1' } };
  const last = {
    'entry:last': {
      at: AT_LAST,
      byUserId: 'owner-1',
      byKeyId: 'key_1',
      notice: { scope: { userId: 'customer-1' }, revoked: 42, writtenAt: AT_LAST },
    },
  };

  it('the entry carrying a notice is one sessions.revoked, for the caller, with the scope, cut-off, count and key', () => {
    const events = deriveEvents(
      { eventName: 'MODIFY', oldImage: record(first), newImage: record({ ...first, ...last }) },
      NOW,
    );
    expect(events).toEqual([
      {
        ownerUserId: 'owner-1',
        sessionId: null,
        boardId: null,
        event: {
          id: revokeAllEventId('last'),
          type: 'sessions.revoked',
          occurredAt: AT_LAST,
          data: {
            scope: { userId: 'customer-1' },
            cutoff: AT_LAST,
            revoked: 42,
            actor: { type: 'api_key', keyId: 'key_1' },
          },
        },
      },
    ]);
  });

  it('the first entry of a call (written before its count) derives nothing', () => {
    expect(deriveEvents({ eventName: 'INSERT', newImage: record(first) }, NOW)).toEqual([]);
  });

  it('both writes folded into one record (the local feed) still derive one event, the same', () => {
    const folded = deriveEvents({ eventName: 'INSERT', newImage: record({ ...first, ...last }) }, NOW);
    const apart = deriveEvents(
      { eventName: 'MODIFY', oldImage: record(first), newImage: record({ ...first, ...last }) },
      NOW,
    );
    expect(folded).toHaveLength(1);
    expect(folded).toEqual(apart);
  });

  it('a record seen again, or gaining another call’s entry, never derives an earlier call again', () => {
    const both = record({ ...first, ...last });
    expect(deriveEvents({ eventName: 'MODIFY', oldImage: both, newImage: { ...both } }, NOW)).toEqual([]);
    const second = {
      'entry:second': {
        at: '2026-01-04T00:00:00.000Z',
        byUserId: 'owner-1',
        byKeyId: 'key_2',
        notice: { scope: { userId: 'customer-1' }, revoked: 0, writtenAt: '2026-01-04T00:00:00.000Z' },
      },
    };
    const events = deriveEvents(
      { eventName: 'MODIFY', oldImage: both, newImage: record({ ...first, ...last, ...second }) },
      NOW,
    );
    expect(
      events.map((e) => [e.event.id, e.event.type, (e.event.data as { revoked: number }).revoked]),
    ).toEqual([[revokeAllEventId('second'), 'sessions.revoked', 0]]);
  });

  it('a board revoke-all is routed with its board; an operator’s to no tenant, as the operator’s', () => {
    const [board] = deriveEvents(
      {
        eventName: 'INSERT',
        newImage: record({
          'entry:b': {
            at: AT_LAST,
            byUserId: 'member-1',
            byKeyId: 'key_m',
            notice: { scope: { boardId: 'board-a' }, revoked: 7, writtenAt: AT_LAST },
          },
        }),
      },
      NOW,
    );
    expect(board).toMatchObject({ ownerUserId: 'member-1', boardId: 'board-a', sessionId: null });
    const [operator] = deriveEvents(
      {
        eventName: 'INSERT',
        newImage: record({
          'entry:o': {
            at: '2025-12-01T00:00:00.000Z',
            byUserId: OPERATOR_USER_ID,
            byKeyId: null,
            notice: { scope: {}, revoked: 9, writtenAt: AT_LAST },
          },
        }),
      },
      NOW,
    );
    expect(operator).toMatchObject({
      ownerUserId: null,
      boardId: null,
      event: {
        occurredAt: AT_LAST,
        data: { scope: {}, cutoff: '2025-12-01T00:00:00.000Z', revoked: 9, actor: { type: 'operator' } },
      },
    });
    expect(operator?.event.data.actor).not.toHaveProperty('keyId');
  });

  it('carries nothing of the record but the notice, the cut-off and the writer’s key id', () => {
    const events = deriveEvents(
      {
        eventName: 'INSERT',
        newImage: record({
          'entry:c': {
            at: AT_LAST,
            byUserId: 'owner-1',
            byKeyId: 'key_1',
            creators: ['owner-1', 'colleague-2'],
            notice: { scope: { userId: 'customer-1' }, revoked: 1, writtenAt: AT_LAST },
          },
        }),
      },
      NOW,
    );
    const text = JSON.stringify(events.map((e) => e.event));
    expect(text).not.toContain('colleague-2');
    expect(text).not.toContain('cutoff#');
    expect(text).not.toContain('creatorUser');
  });

  it('the other copies of a record derive nothing: one call is one event, from copy 0', () => {
    const copy = (entries: Record<string, unknown>) => ({
      ...record(entries),
      id: 'cutoff#0f0f#3',
      cutoffCopy: 3,
    });
    expect(
      deriveEvents(
        { eventName: 'MODIFY', oldImage: copy(first), newImage: copy({ ...first, ...last }) },
        NOW,
      ),
    ).toEqual([]);
    expect(deriveEvents({ eventName: 'INSERT', newImage: copy({ ...first, ...last }) }, NOW)).toEqual([]);
    expect(cutoffFanOuts({ eventName: 'INSERT', newImage: copy({ ...first, ...last }) })).toEqual([]);
    // Copy 0 of the same record still derives its one event.
    expect(
      deriveEvents({ eventName: 'INSERT', newImage: record({ ...first, ...last }) }, NOW).map(
        (e) => e.event.id,
      ),
    ).toEqual([revokeAllEventId('last')]);
  });

  it('an entry id fixes the event id: the same for the same entry, different across entries and from session events', () => {
    expect(revokeAllEventId('a')).toBe(revokeAllEventId('a'));
    expect(revokeAllEventId('a')).not.toBe(revokeAllEventId('b'));
    expect(revokeAllEventId('a')).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(revokeAllEventId('a')).not.toBe(eventId('a', 'session.revoked'));
  });
});

describe('starting the logout fan-out of revocation cut-off records', () => {
  const scope = { kind: 'creatorUser', creatorUserId: 'owner-1', userId: 'customer-1' } as const;
  const record = (entries: Record<string, unknown>) => ({
    id: 'cutoff#0f0f',
    cutoffScope: '["creatorUser","owner-1","customer-1"]',
    ...entries,
  });
  const entry = (at: string) => ({ at, byUserId: 'owner-1', byKeyId: 'key_1' });
  const first = { 'entry:first': entry('2026-01-03T00:00:00.000Z') };
  const last = { 'entry:last': entry('2026-01-03T00:00:00.250Z') };

  it('starts one fan-out per entry that appeared, announced or not, named by the record’s scope, with its instant', () => {
    expect(cutoffFanOuts({ eventName: 'INSERT', newImage: record(first) })).toEqual([
      { scope, entryId: 'first', at: '2026-01-03T00:00:00.000Z' },
    ]);
    expect(
      cutoffFanOuts({
        eventName: 'MODIFY',
        oldImage: record(first),
        newImage: record({ ...first, ...last }),
      }),
    ).toEqual([{ scope, entryId: 'last', at: '2026-01-03T00:00:00.250Z' }]);
    // Both writes folded into one record (the local feed): both entries, once each.
    expect(cutoffFanOuts({ eventName: 'INSERT', newImage: record({ ...first, ...last }) })).toEqual([
      { scope, entryId: 'first', at: '2026-01-03T00:00:00.000Z' },
      { scope, entryId: 'last', at: '2026-01-03T00:00:00.250Z' },
    ]);
  });

  it('starts one for what a call’s last write added when it moved its entry later: from the old instant on', () => {
    const moved = { 'entry:first': { ...entry('2026-01-03T00:00:00.900Z'), until: 1_900_000_000 } };
    expect(cutoffFanOuts({ eventName: 'MODIFY', oldImage: record(first), newImage: record(moved) })).toEqual([
      { scope, entryId: 'first', at: '2026-01-03T00:00:00.900Z', since: '2026-01-03T00:00:00.000Z' },
    ]);
    // Only its expiry changed, or another entry merged away: nothing to start.
    const counted = { 'entry:first': { ...entry('2026-01-03T00:00:00.000Z'), until: 1_900_000_000 } };
    expect(
      cutoffFanOuts({ eventName: 'MODIFY', oldImage: record(first), newImage: record(counted) }),
    ).toEqual([]);
    expect(
      cutoffFanOuts({ eventName: 'MODIFY', oldImage: record({ ...first, ...last }), newImage: record(last) }),
    ).toEqual([]);
  });

  it('starts nothing for an entry the record already held, a removed record, a session, or a record of no known scope', () => {
    const both = record({ ...first, ...last });
    expect(cutoffFanOuts({ eventName: 'MODIFY', oldImage: both, newImage: both })).toEqual([]);
    expect(cutoffFanOuts({ eventName: 'REMOVE', oldImage: both })).toEqual([]);
    expect(cutoffFanOuts({ eventName: 'INSERT', newImage: item() })).toEqual([]);
    expect(cutoffFanOuts({ eventName: 'INSERT', newImage: { ...both, cutoffScope: '["nope"]' } })).toEqual(
      [],
    );
  });
});
