import { describe, expect, it } from 'vitest';
import { SPEC_SESSION_FIELDS, sessionStatus, specSession, toSessionView } from '#lib/domain/session';
import { storedSession } from '#test/support/fixtures';

const NOW = new Date('2026-03-01T00:00:00.000Z');

describe('specSession', () => {
  it('has exactly the spec’s fields, in the spec’s order, and nothing the service keeps beside them', () => {
    const session = storedSession({ tokenHash: 'h'.repeat(64), bindingHash: 'b'.repeat(64) });
    expect(Object.keys(specSession(session))).toEqual([...SPEC_SESSION_FIELDS]);
    for (const field of SPEC_SESSION_FIELDS) expect(specSession(session)[field]).toEqual(session[field]);
  });
});

describe('toSessionView', () => {
  it('shows the spec’s fields, then status, revokedAt, bindToBrowser and boundAt; never a hash', () => {
    const session = storedSession({ tokenHash: 'h'.repeat(64), bindingHash: 'b'.repeat(64) });
    const view = toSessionView(session, NOW);
    expect(Object.keys(view)).toEqual([
      ...SPEC_SESSION_FIELDS,
      'status',
      'revokedAt',
      'bindToBrowser',
      'boundAt',
    ]);
    expect(JSON.stringify(view)).not.toMatch(/hhhh|bbbb/);
    expect(view.status).toBe(sessionStatus(session, NOW));
  });

  it('gives each view an object of its own', () => {
    const session = storedSession();
    const first = toSessionView(session, NOW);
    first.email = 'changed@example.com';
    expect(toSessionView(session, NOW).email).toBe(session.email);
  });
});
