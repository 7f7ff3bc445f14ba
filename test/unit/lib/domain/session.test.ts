import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SPEC_SESSION_FIELDS, sessionStatus, specSession, toSessionView } from '#lib/domain/session';
import { storedSession } from '#test/support/fixtures';

const NOW = new Date('2026-03-01T00:00:00.000Z');

/** The session's fields as the spec document's create response lists them, in its order. */
function specDocumentSessionFields(): string[] {
  const spec = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'spec.md'), 'utf8');
  const row = spec.split('\n').find((line) => /^\| `session` +\|/.test(line)) ?? '';
  const fields = row.split('|')[2] ?? '';
  return [...fields.matchAll(/`(\w+)`/g)].map((match) => match[1] ?? '');
}

describe('SPEC_SESSION_FIELDS', () => {
  it('lists the spec document’s session fields in its order, the token excepted', () => {
    expect(specDocumentSessionFields()).toContain('token');
    expect([...SPEC_SESSION_FIELDS]).toEqual(
      specDocumentSessionFields().filter((field) => field !== 'token'),
    );
  });
});

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
