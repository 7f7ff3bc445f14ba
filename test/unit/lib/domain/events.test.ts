import { describe, expect, it } from 'vitest';
import { eventSequence, SESSION_EVENT_TYPES } from '#lib/domain/events';

describe('session event order', () => {
  it('numbers the types in the order a session can go through them', () => {
    expect(SESSION_EVENT_TYPES.map(eventSequence)).toEqual([1, 2, 3, 4, 5]);
    expect(eventSequence('session.created')).toBeLessThan(eventSequence('session.opened'));
    expect(eventSequence('session.bound')).toBeLessThan(eventSequence('session.opened'));
    expect(eventSequence('session.opened')).toBeLessThan(eventSequence('session.revoked'));
  });
});
