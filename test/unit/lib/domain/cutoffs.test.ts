import { describe, expect, it } from 'vitest';
import { DEFAULT_EXPIRES_IN_SECONDS } from '#lib/adapters/http/validation/create-session';
import {
  type CoverageSubject,
  CUTOFF_ENTRIES_MAX,
  CUTOFF_UNSEEN_LIFETIME_SECONDS,
  type CutoffEntry,
  type CutoffRecord,
  type CutoffScope,
  countedThrough,
  coveredSince,
  coveringCutoff,
  cutoffRecordExpiry,
  cutoffScopeKey,
  cutoffScopesOf,
  firstCoveringCutoff,
  mergeCutoff,
  parseCutoffScopeKey,
  tenantDecides,
} from '#lib/domain/cutoffs';

const SCOPES: CutoffScope[] = [
  { kind: 'tenantUser', tenant: { kind: 'organization', id: 'org-a' }, userId: 'u' },
  { kind: 'tenantUser', tenant: { kind: 'keyOwner', id: 'owner-1' }, userId: 'u' },
  { kind: 'tenantBoardUser', tenant: { kind: 'organization', id: 'org-a' }, boardId: 'b', userId: 'u' },
  { kind: 'creatorUser', creatorUserId: 'owner-1', userId: 'u' },
  { kind: 'creatorBoardUser', creatorUserId: 'owner-1', boardId: 'b', userId: 'u' },
  { kind: 'orgUser', orgId: 'org-a', userId: 'u' },
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

const session: CoverageSubject = {
  orgId: 'org-a',
  userId: 'u',
  boardId: 'b',
  createdByUserId: 'owner-1',
  createdAt: '2026-01-01T00:00:00.000Z',
  tenant: { kind: 'organization', id: 'org-a' },
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
    '["tenantUser","team","org-a","u"]',
    '["tenantUser","organization","org-a"]',
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
    const orgUser: CutoffScope = {
      kind: 'tenantUser',
      tenant: { kind: 'organization', id: 'org-a' },
      userId: 'u',
    };
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

describe('cut-off records per tenant', () => {
  const at = '2026-01-02T00:00:00.000Z';
  const org = (id: string) => ({ kind: 'organization' as const, id });

  it('reads, for a session, the records of its creator, its board’s organization’s tenant, its board, its user, the stage, its creator in its organization, and the legacy kinds', () => {
    expect(cutoffScopesOf(session).map((scope) => cutoffScopeKey(scope))).toEqual([
      '["creatorUser","owner-1","u"]',
      '["creatorBoardUser","owner-1","b","u"]',
      '["tenantUser","organization","org-a","u"]',
      '["tenantBoardUser","organization","org-a","b","u"]',
      '["board","b"]',
      '["user","u"]',
      '["stage"]',
      '["orgCreator","org-a","owner-1"]',
      '["orgUser","org-a","u"]',
      '["boardUser","b","u"]',
    ]);
  });

  it('covers with a tenant record only that tenant’s sessions, not another tenant’s on the same board', () => {
    const record: CutoffRecord = {
      scope: { kind: 'tenantBoardUser', tenant: org('org-a'), boardId: 'b', userId: 'u' },
      entries: [entry('e', at)],
    };
    expect(coveringCutoff(session, [record])?.id).toBe('e');
    const another = {
      ...session,
      createdByUserId: 'guest',
      tenant: { kind: 'keyOwner' as const, id: 'guest' },
    };
    expect(coveringCutoff(another, [record])).toBeUndefined();
  });

  it('honours the creators a legacy entry names', () => {
    const record: CutoffRecord = {
      scope: { kind: 'boardUser', boardId: 'b', userId: 'u' },
      entries: [entry('legacy', at, ['colleague'])],
    };
    expect(coveringCutoff(session, [record])).toBeUndefined();
    expect(coveringCutoff({ ...session, createdByUserId: 'colleague' }, [record])?.id).toBe('legacy');
  });

  it('tells when the tenant decides: a tenant record of the same user holds a cut-off since the creation', () => {
    const tenantRecord = (userId: string, cutoff: string): CutoffRecord => ({
      scope: { kind: 'tenantUser', tenant: org('org-a'), userId },
      entries: [entry('t', cutoff)],
    });
    expect(tenantDecides(session, [tenantRecord('u', at)])).toBe(true);
    expect(tenantDecides(session, [tenantRecord('other', at)])).toBe(false);
    expect(tenantDecides(session, [tenantRecord('u', '2025-12-31T00:00:00.000Z')])).toBe(false);
    expect(
      tenantDecides(session, [{ scope: { kind: 'board', boardId: 'b' }, entries: [entry('b', at)] }]),
    ).toBe(false);
  });
});

describe('mergeCutoff', () => {
  const minute = (n: number) => new Date(Date.UTC(2026, 0, 2, 0, n)).toISOString();
  const LATER = 2_000_000_000;
  const by = (id: string, n: number, byUserId: string, until?: number): CutoffEntry => ({
    id,
    at: minute(n),
    byUserId,
    byKeyId: null,
    ...(until !== undefined ? { until } : {}),
  });
  const write = (entry: CutoffEntry, countedThrough?: string) => ({
    entry,
    ...(countedThrough !== undefined ? { countedThrough } : {}),
    now: entry.at,
  });
  /** The record after each of `writes`, from none. */
  const recordAfter = (...writes: ReturnType<typeof write>[]) => {
    let record: Pick<CutoffRecord, 'entries' | 'coversUntil'> | undefined;
    for (const w of writes) record = mergeCutoff(record, w);
    return record as Pick<CutoffRecord, 'entries' | 'coversUntil'>;
  };
  const coveredAt = (record: Pick<CutoffRecord, 'entries'>, createdAt: string) =>
    coveringCutoff({ ...session, createdAt }, [
      { scope: { kind: 'board', boardId: 'b' }, entries: record.entries },
    ]);

  it('replaces a call’s first cut-off by its last: one entry, at the last instant, counted', () => {
    const first = by('call', 1, 'a');
    const record = recordAfter(write(first), write({ ...first, at: minute(2), until: LATER }, minute(1)));
    expect(record.entries).toEqual([{ ...first, at: minute(2), until: LATER }]);
    expect(cutoffRecordExpiry(record)).toBe(LATER);
  });

  it('keeps the later instant when a first write is retried after the last', () => {
    const last = { ...by('call', 2, 'a'), until: LATER };
    const record = recordAfter(write(last, minute(1)), write(by('call', 1, 'a')));
    expect(record.entries).toEqual([last]);
  });

  it('never expires while an entry is uncounted, and counts the uncounted entries a later count read past', () => {
    const record = recordAfter(write(by('failed', 1, 'b')), write(by('call', 2, 'a')));
    expect(cutoffRecordExpiry({ ...record, coversUntil: LATER })).toBeUndefined();
    const done = mergeCutoff(record, write({ ...by('call', 3, 'a'), until: LATER }, minute(2)));
    // The failed call's cut-off stays (its sessions keep their instant), now counted.
    expect(done.entries).toEqual([
      { ...by('failed', 1, 'b'), until: LATER },
      { ...by('call', 3, 'a'), until: LATER },
    ]);
    expect(done.dropped).toEqual([]);
    expect(cutoffRecordExpiry(done)).toBe(LATER);
    // One the count did not read past stays uncounted, and the record without an expiry.
    const notYet = mergeCutoff(
      recordAfter(write(by('late', 5, 'b'))),
      write({ ...by('call', 6, 'a'), until: LATER }, minute(4)),
    );
    expect(cutoffRecordExpiry(notYet)).toBeUndefined();
  });

  it('holds at most CUTOFF_ENTRIES_MAX entries, dropping the writer’s own oldest first, and keeps every session covered', () => {
    let record = recordAfter(write(by('other', 0, 'b', LATER)));
    for (let n = 1; n <= 20; n++) record = mergeCutoff(record, write(by(`a${n}`, n, 'a', LATER), minute(n)));
    expect(record.entries.length).toBe(CUTOFF_ENTRIES_MAX);
    // The other writer's cut-off stays; writer a's oldest went, its sessions covered by a later one.
    expect(record.entries.map((e) => e.id)).toContain('other');
    expect(record.entries.map((e) => e.id)).toContain('a20');
    for (let n = 0; n <= 20; n++) expect(coveredAt(record, minute(n))).toBeDefined();
    // A session a dropped cut-off covered shows the next one that covers it: later, never none.
    expect(coveredAt(record, minute(5))?.at).toBe(minute(14));
  });

  it('drops the oldest of all when the writer has no earlier cut-off there', () => {
    let record = recordAfter(write(by('b0', 0, 'b', LATER)));
    for (let n = 1; n < CUTOFF_ENTRIES_MAX; n++)
      record = mergeCutoff(record, write(by(`b${n}`, n, 'b', LATER)));
    const merged = mergeCutoff(record, write(by('c', 10, 'c', LATER)));
    expect(merged.dropped).toEqual(['b0']);
    expect(coveredAt(merged, minute(0))?.id).toBe('b1');
  });

  it('makes the next entry uncounted when it drops an uncounted one: the record cannot expire early', () => {
    let record = recordAfter(write(by('old', 0, 'b')));
    for (let n = 1; n < CUTOFF_ENTRIES_MAX; n++)
      record = mergeCutoff(record, write(by(`b${n}`, n, 'b', LATER)));
    const merged = mergeCutoff(record, write(by('c', 10, 'c', LATER), minute(10)));
    // The uncounted 'old' is read past by 'c' (its count read to minute 10): counted, then dropped.
    expect(merged.dropped).toEqual(['old']);
    expect(cutoffRecordExpiry(merged)).toBe(LATER);
    const uncountedLater = mergeCutoff(record, write(by('c', 10, 'c', LATER)));
    expect(uncountedLater.dropped).toEqual(['old']);
    expect(uncountedLater.entries.find((e) => e.id === 'b1')?.until).toBeUndefined();
    expect(cutoffRecordExpiry(uncountedLater)).toBeUndefined();
  });

  it('drops a counted cut-off whose sessions have all expired, unless it is the latest but the one written', () => {
    const expired = Date.parse(minute(5)) / 1000;
    const record = recordAfter(write(by('dead', 1, 'b', expired)), write(by('live', 2, 'b', LATER)));
    const merged = mergeCutoff(record, { entry: by('c', 10, 'c', LATER), now: minute(10) });
    expect(merged.dropped).toEqual(['dead']);
    const alone = mergeCutoff(recordAfter(write(by('dead', 1, 'b', expired))), {
      entry: by('c', 10, 'c'),
      now: minute(10),
    });
    expect(alone.dropped).toEqual([]);
  });

  it('shrinks a record of thousands of entries, written before records were bounded, in one merge', () => {
    const legacy = Array.from({ length: 3_000 }, (_, n) => ({
      id: `old-${n}`,
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      byUserId: 'b',
      byKeyId: null,
    }));
    const merged = mergeCutoff({ entries: legacy }, write(by('new', 1_000, 'a', LATER), minute(999)));
    expect(merged.entries).toHaveLength(CUTOFF_ENTRIES_MAX);
    expect(merged.dropped).toHaveLength(3_000 + 1 - CUTOFF_ENTRIES_MAX);
    // Counted by the new write's count, which read past all of them: the record may expire.
    expect(cutoffRecordExpiry(merged)).toBe(LATER);
    expect(coveredAt(merged, legacy[0]?.at as string)).toBeDefined();
  });

  it('only grows the latest known expiry', () => {
    const record = recordAfter(write(by('a', 1, 'a', LATER)), write(by('b', 2, 'b', 1_900_000_000)));
    expect(record.coversUntil).toBe(LATER);
  });

  it('keeps records for at least the default session lifetime after a cut-off', () => {
    expect(CUTOFF_UNSEEN_LIFETIME_SECONDS).toBe(DEFAULT_EXPIRES_IN_SECONDS);
  });
});

describe('countedThrough', () => {
  it('is the latest counted entry naming no creators, the call’s own left out', () => {
    const record: CutoffRecord = {
      scope: { kind: 'board', boardId: 'b' },
      entries: [
        { ...entry('counted', '2026-01-02T00:00:00.000Z'), until: 1 },
        { ...entry('own', '2026-01-04T00:00:00.000Z'), until: 1 },
        entry('uncounted', '2026-01-03T00:00:00.000Z'),
      ],
    };
    expect(countedThrough(record, new Set(['own']))).toBe('2026-01-02T00:00:00.000Z');
    expect(
      countedThrough({ ...record, entries: [entry('uncounted', '2026-01-03T00:00:00.000Z')] }),
    ).toBeUndefined();
  });
});
