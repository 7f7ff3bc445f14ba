import { describe, expect, it } from 'vitest';
import {
  type CutoffEntry,
  type CutoffRecord,
  type CutoffScope,
  coveredSince,
  cutoffScopeKey,
  firstCoveringCutoff,
  parseCutoffScopeKey,
} from '#lib/domain/cutoffs';

const SCOPES: CutoffScope[] = [
  { kind: 'orgUser', orgId: 'org-a', userId: 'u' },
  { kind: 'creatorUser', creatorUserId: 'owner-1', userId: 'u' },
  { kind: 'boardUser', boardId: 'b', userId: 'u' },
  { kind: 'board', boardId: 'b' },
  { kind: 'user', userId: 'u' },
  { kind: 'stage' },
];

const entry = (id: string, at: string, creators?: string[]): CutoffEntry => ({
  id,
  at,
  byUserId: 'owner-1',
  byKeyId: null,
  ...(creators ? { creators } : {}),
});

const session = {
  orgId: 'org-a',
  userId: 'u',
  boardId: 'b',
  createdByUserId: 'owner-1',
  createdAt: '2026-01-01T00:00:00.000Z',
};

describe('parseCutoffScopeKey', () => {
  it.each(SCOPES)('reads back the scope whose key a record stores: %o', (scope) => {
    expect(parseCutoffScopeKey(cutoffScopeKey(scope))).toEqual(scope);
  });

  it.each([
    'not json',
    '["board"]',
    '["board","b","x"]',
    '["stage","x"]',
    '[1,2]',
    '["admin","x"]',
    '{"kind":"stage"}',
  ])('names no scope for %s', (key) => {
    expect(parseCutoffScopeKey(key)).toBeUndefined();
  });
});

describe('firstCoveringCutoff', () => {
  it('is the earliest entry covering the session, whatever record holds it', () => {
    const records: CutoffRecord[] = [
      { scope: { kind: 'board', boardId: 'b' }, entries: [entry('late', '2026-01-03T00:00:00.000Z')] },
      { scope: { kind: 'user', userId: 'u' }, entries: [entry('early', '2026-01-02T00:00:00.000Z')] },
    ];
    expect(firstCoveringCutoff(session, records)?.entry.id).toBe('early');
  });

  it('names one record when one call wrote the same entry into several: the first by key', () => {
    const same = entry('call', '2026-01-02T00:00:00.000Z');
    const orgUser: CutoffScope = { kind: 'orgUser', orgId: 'org-a', userId: 'u' };
    const creatorUser: CutoffScope = { kind: 'creatorUser', creatorUserId: 'owner-1', userId: 'u' };
    const first = [cutoffScopeKey(orgUser), cutoffScopeKey(creatorUser)].sort()[0];
    for (const order of [
      [orgUser, creatorUser],
      [creatorUser, orgUser],
    ]) {
      const found = firstCoveringCutoff(
        session,
        order.map((scope) => ({ scope, entries: [same] })),
      );
      expect(cutoffScopeKey(found?.scope as CutoffScope)).toBe(first);
    }
  });

  it('skips entries that do not cover it: created after, another creator, another scope', () => {
    const records: CutoffRecord[] = [
      {
        scope: { kind: 'board', boardId: 'b' },
        entries: [entry('before-creation', '2025-12-31T00:00:00.000Z')],
      },
      {
        scope: { kind: 'boardUser', boardId: 'b', userId: 'u' },
        entries: [entry('others', '2026-01-02T00:00:00.000Z', ['x'])],
      },
      {
        scope: { kind: 'board', boardId: 'other' },
        entries: [entry('elsewhere', '2026-01-02T00:00:00.000Z')],
      },
    ];
    expect(firstCoveringCutoff(session, records)).toBeUndefined();
  });
});

describe('coveredSince', () => {
  const at = (minute: number) => `2026-01-02T00:${String(minute).padStart(2, '0')}:00.000Z`;

  it('is the latest earlier entry of the record covering all the entry covers; none without one', () => {
    const record: CutoffRecord = {
      scope: { kind: 'orgUser', orgId: 'org-a', userId: 'u' },
      entries: [
        entry('first', at(1), ['owner-1', 'colleague']),
        entry('narrower', at(2), ['owner-1']),
        entry('last', at(3), ['owner-1', 'colleague']),
        entry('after', at(4)),
      ],
    };
    const [first, , last] = record.entries as CutoffEntry[];
    expect(coveredSince(record, last as CutoffEntry)).toBe(at(1));
    expect(coveredSince(record, first as CutoffEntry)).toBeUndefined();
  });

  it('counts an entry naming no creators as covering all', () => {
    const record: CutoffRecord = {
      scope: { kind: 'board', boardId: 'b' },
      entries: [entry('a', at(1)), entry('b', at(2))],
    };
    expect(coveredSince(record, record.entries[1] as CutoffEntry)).toBe(at(1));
  });
});
