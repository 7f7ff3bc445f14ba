import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Board } from '#lib/domain/board';
import { CUTOFF_ENTRIES_MAX, CUTOFF_UNSEEN_LIFETIME_SECONDS } from '#lib/domain/cutoffs';
import { ApiKeyNotFoundError, BoardNotFoundError, ValidationError } from '#lib/domain/errors';
import { cryptoRandom } from '#lib/platform/system';
import {
  addMember,
  applyBoard,
  BOARD_VISIBILITIES,
  createApiKey,
  createBoard,
  deleteBoard,
  listApiKeys,
  RECORD_ONLY_THROTTLING,
  removeMember,
  revokeApiKey,
  setRateLimit,
  syncRateLimits,
} from '#lib/use-cases/admin';
import {
  apiKeyRecord,
  FakeApiKeys,
  FakeBoards,
  FakeKeyThrottling,
  FakeMemberships,
  FakeSessions,
  fixedClock,
  sequenceRandom,
} from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const NOW = '2026-03-01T12:00:00.000Z';
const LATER = '2026-03-02T08:30:00.000Z';

const board = (overrides: Partial<Board> = {}): Board => ({
  boardId: 'board-1',
  orgId: 'org-a',
  visibility: 'PUBLIC',
  name: 'Roadmap',
  ...overrides,
});

describe('createBoard', () => {
  it.each(BOARD_VISIBILITIES)('stores and returns a %s board', async (visibility) => {
    const boards = new FakeBoards();
    const created = await createBoard({ boards }, board({ visibility }));
    expect(created).toEqual(board({ visibility }));
    expect(await boards.list()).toEqual([board({ visibility })]);
  });

  it('replaces a board within its organization but never moves it to another', async () => {
    const boards = new FakeBoards();
    await createBoard({ boards }, board({ visibility: 'PRIVATE' }));
    await createBoard({ boards }, board({ visibility: 'PUBLIC' }));
    await expect(createBoard({ boards }, board({ orgId: 'elsewhere' }))).rejects.toThrow(
      'belongs to another organization; a board never changes organization',
    );
    expect(await boards.list()).toEqual([board({ visibility: 'PUBLIC' })]);
  });

  it('offers exactly PUBLIC and PRIVATE', () => {
    expect(BOARD_VISIBILITIES).toEqual(['PUBLIC', 'PRIVATE']);
  });

  it('accepts ids of 256 characters, like the API', async () => {
    const boards = new FakeBoards();
    await createBoard({ boards }, board({ boardId: 'b'.repeat(256), orgId: '😀'.repeat(256) }));
    expect(await boards.list()).toHaveLength(1);
  });

  it('replaces a board with the same id', async () => {
    const boards = new FakeBoards([board()]);
    await createBoard({ boards }, board({ visibility: 'PRIVATE', name: 'Renamed' }));
    expect(await boards.list()).toEqual([board({ visibility: 'PRIVATE', name: 'Renamed' })]);
  });

  it.each(['public', 'Private', 'INTERNAL', '', ' PUBLIC'])(
    'refuses the visibility %j and stores nothing',
    async (visibility) => {
      const boards = new FakeBoards();
      await expect(createBoard({ boards }, board({ visibility }))).rejects.toThrow(
        new ValidationError('visibility must be one of PUBLIC, PRIVATE'),
      );
      expect(await boards.list()).toEqual([]);
    },
  );

  it.each([
    ['an empty board id', { boardId: '' }, '--board must not be empty'],
    ['a blank board id', { boardId: '   ' }, '--board must not be empty'],
    ['an empty org id', { orgId: '' }, '--org must not be empty'],
    ['a blank org id', { orgId: '\t' }, '--org must not be empty'],
    ['a board id the API could not address', { boardId: 'b'.repeat(257) }, '--board must be at most 256'],
    ['an org id over 256 characters', { orgId: '😀'.repeat(257) }, '--org must be at most 256'],
  ])('refuses %s and stores nothing', async (_label, overrides, message) => {
    const boards = new FakeBoards();
    const outcome = createBoard({ boards }, board(overrides));
    await expect(outcome).rejects.toBeInstanceOf(ValidationError);
    await expect(outcome).rejects.toThrow(message);
    expect(await boards.list()).toEqual([]);
  });
});

describe('createBoard: the board’s own embed origins', () => {
  const ORIGINS = ['https://app.acme.com', 'https://*.acme.com', 'http://localhost:3000'];

  it('stores the origins allowed to frame the board, each once', async () => {
    const boards = new FakeBoards();
    const created = await createBoard(
      { boards },
      { ...board(), embedOrigins: [...ORIGINS, ORIGINS[0] ?? ''] },
    );
    expect(created.embedOrigins).toEqual(ORIGINS);
    expect((await boards.get('board-1'))?.embedOrigins).toEqual(ORIGINS);
  });

  it.each([
    ['a path', 'https://app.acme.com/embed'],
    ['a trailing slash', 'https://app.acme.com/'],
    ['plain http on a public host', 'http://app.acme.com'],
    ['a scheme only', 'https:'],
    ["'self'", "'self'"],
    ['a bare wildcard', '*'],
    ['a wildcard inside the host', 'https://app.*.acme.com'],
    ['a wildcard port', 'http://localhost:*'],
    ['an underscore in the host', 'https://app_x.acme.com'],
    ['a query', 'https://app.acme.com?x=1'],
    ['a second source in one entry', 'https://a.acme.com https://b.acme.com'],
    ['a CSP directive', "https://a.acme.com; script-src 'unsafe-inline'"],
    ['an empty origin', ''],
  ])('refuses %s, naming it, and stores nothing', async (_label, origin) => {
    const boards = new FakeBoards();
    const outcome = createBoard({ boards }, { ...board(), embedOrigins: ['https://ok.acme.com', origin] });
    await expect(outcome).rejects.toBeInstanceOf(ValidationError);
    await expect(outcome).rejects.toThrow(`got "${origin}"`);
    expect(await boards.list()).toEqual([]);
  });
});

describe('createBoard: the board’s own application', () => {
  const APP = 'https://board.acme.com/embedded';

  it('stores the app URL the board’s users are handed to', async () => {
    const boards = new FakeBoards();
    const created = await createBoard({ boards }, { ...board(), appUrl: APP });
    expect(created.appUrl).toBe(APP);
    expect((await boards.get('board-1'))?.appUrl).toBe(APP);
  });

  it.each([
    ['plain http on a public host', 'http://board.acme.com'],
    ['http on loopback, off the local runtime', 'http://127.0.0.1:3001/'],
    ['no URL at all', 'board.acme.com'],
    ['credentials', 'https://user:pw@board.acme.com/'],
    ['a fragment', 'https://board.acme.com/#x'],
    ['another scheme', 'javascript:alert(1)'],
  ])('refuses %s and stores nothing', async (_label, appUrl) => {
    const boards = new FakeBoards();
    await expect(createBoard({ boards }, { ...board(), appUrl })).rejects.toBeInstanceOf(ValidationError);
    expect(await boards.list()).toEqual([]);
  });

  it.each(['http://127.0.0.1:3001/', 'http://localhost:3001/board'])(
    'accepts %s where the rule allows loopback http (the local runtime)',
    async (appUrl) => {
      const boards = new FakeBoards();
      const created = await createBoard(
        { boards, appUrlRule: { allowLoopbackHttp: true } },
        { ...board(), appUrl },
      );
      expect(created.appUrl).toBe(appUrl);
    },
  );

  it('still refuses public http where loopback http is allowed', async () => {
    const outcome = createBoard(
      { boards: new FakeBoards(), appUrlRule: { allowLoopbackHttp: true } },
      { ...board(), appUrl: 'http://board.acme.com/' },
    );
    await expect(outcome).rejects.toThrow('https');
  });
});

describe('createBoard: a board’s optional settings', () => {
  const SET = {
    embedOrigins: ['https://app.acme.com', 'https://*.acme.com'],
    appUrl: 'https://board.acme.com/embedded',
    logoutUrl: 'https://board.acme.com/backchannel-logout',
  };

  // So framing never widens, nor a board's users are handed elsewhere, by accident.
  it.each(Object.entries(SET))(
    'keeps the board’s %s when a replacement leaves it out',
    async (field, value) => {
      const boards = new FakeBoards([board({ [field]: value })]);
      const replaced = await createBoard({ boards }, board({ name: 'Renamed' }));
      expect(replaced).toEqual(board({ name: 'Renamed', [field]: value }));
    },
  );

  // Without origins or an app URL the stage default (or the built-in page) applies; without a logout URL
  // none is sent.
  it.each([
    ['embedOrigins', SET.embedOrigins, []],
    ['embedOrigins', SET.embedOrigins, null],
    ['appUrl', SET.appUrl, ''],
    ['appUrl', SET.appUrl, null],
    ['logoutUrl', SET.logoutUrl, ''],
    ['logoutUrl', SET.logoutUrl, null],
  ])('removes the board’s %s (%j) when given %j', async (field, url, value) => {
    const boards = new FakeBoards([board({ [field]: url })]);
    const cleared = await createBoard({ boards }, { ...board(), [field]: value });
    expect(cleared).not.toHaveProperty(field);
    expect(await boards.get('board-1')).toEqual(board());
  });
});

describe('createBoard: where the board’s application receives back-channel logouts', () => {
  const LOGOUT = 'https://board.acme.com/backchannel-logout';

  it('stores the logout URL, and keeps it when a replacement leaves it out', async () => {
    const boards = new FakeBoards();
    expect((await createBoard({ boards }, { ...board(), logoutUrl: LOGOUT })).logoutUrl).toBe(LOGOUT);
    const replaced = await createBoard({ boards }, board({ name: 'Renamed' }));
    expect(replaced).toEqual(board({ name: 'Renamed', logoutUrl: LOGOUT }));
    expect((await boards.get('board-1'))?.logoutUrl).toBe(LOGOUT);
  });

  it.each([
    ['plain http on a public host', 'http://board.acme.com/logout'],
    ['http on loopback, off the local runtime', 'http://127.0.0.1:3001/backchannel-logout'],
    ['credentials', 'https://user:pw@board.acme.com/logout'],
    ['no URL at all', 'board.acme.com'],
  ])('refuses %s as a logout URL, naming it, and stores nothing', async (_label, logoutUrl) => {
    const boards = new FakeBoards();
    const outcome = createBoard({ boards }, { ...board(), logoutUrl });
    await expect(outcome).rejects.toBeInstanceOf(ValidationError);
    expect(await boards.list()).toEqual([]);
  });

  it('accepts a loopback http logout URL where the rules allow it (the local runtime, loopback allowed)', async () => {
    const created = await createBoard(
      {
        boards: new FakeBoards(),
        appUrlRule: { allowLoopbackHttp: true },
        destinations: { allowLoopback: true },
      },
      { ...board(), logoutUrl: 'http://127.0.0.1:3001/backchannel-logout' },
    );
    expect(created.logoutUrl).toBe('http://127.0.0.1:3001/backchannel-logout');
  });

  it.each([
    [
      'the instance metadata service',
      'https://169.254.169.254/latest/meta-data/',
      '169.254.169.254 is a link-local address',
    ],
    ['a private address', 'https://10.0.0.1/logout', '10.0.0.1 is a private address'],
    ['the same in decimal', 'https://2852039166/logout', '169.254.169.254 is a link-local address'],
    [
      'an IPv4-mapped loopback address',
      'https://[::ffff:127.0.0.1]/logout',
      '[::ffff:7f00:1] is an IPv4-mapped address of 127.0.0.1, a loopback address',
    ],
    ['an internal name', 'https://board-app/logout', 'board-app is a single-label name'],
    ['a loopback name', 'https://localhost/logout', 'localhost is a loopback name'],
  ])(
    'refuses a logout URL pointing at %s: the service itself would POST there',
    async (_label, logoutUrl, reason) => {
      const boards = new FakeBoards();
      const outcome = createBoard({ boards }, { ...board(), logoutUrl });
      await expect(outcome).rejects.toThrow(`a logout URL must point to the public internet: ${reason}`);
      expect(await boards.list()).toEqual([]);
    },
  );

  it('refuses loopback on the local runtime unless allowed, saying how; the app URL needs no such check', async () => {
    const local = {
      boards: new FakeBoards(),
      appUrlRule: { allowLoopbackHttp: true },
      destinations: { allowLoopback: false, loopbackHint: 'WEBHOOK_ALLOW_LOOPBACK=1 allows it' },
    };
    await expect(
      createBoard(local, { ...board(), logoutUrl: 'http://127.0.0.1:3001/backchannel-logout' }),
    ).rejects.toThrow(
      'a logout URL must point to the public internet: 127.0.0.1 is a loopback address (WEBHOOK_ALLOW_LOOPBACK=1 allows it)',
    );
    // The browser posts to the app URL, not the service: loopback stays fine there.
    const created = await createBoard(local, { ...board(), appUrl: 'http://127.0.0.1:3001/handoff' });
    expect(created.appUrl).toBe('http://127.0.0.1:3001/handoff');
  });
});

describe('addMember and removeMember', () => {
  it('adds a member, idempotently, stamped with the injected clock', async () => {
    const memberships = new FakeMemberships();
    const clock = fixedClock('2026-04-05T06:07:08.009Z');
    expect(await addMember({ memberships, clock, actor: 'cli:ada' }, 'org-a', 'user-1')).toEqual({
      orgId: 'org-a',
      userId: 'user-1',
      member: true,
      outcome: 'created',
    });
    // Again: a member already, so nothing is written and the first addition keeps its time and author.
    expect(await addMember({ memberships, clock: fixedClock(LATER) }, 'org-a', 'user-1')).toMatchObject({
      outcome: 'unchanged',
    });
    expect(await memberships.isMember('org-a', 'user-1')).toBe(true);
    expect(await memberships.isMember('org-b', 'user-1')).toBe(false);
    expect(memberships.added).toEqual([
      { orgId: 'org-a', userId: 'user-1', addedAt: '2026-04-05T06:07:08.009Z', addedBy: 'cli:ada' },
    ]);
  });

  it('removes a member and says whether there was a membership', async () => {
    const memberships = new FakeMemberships([{ orgId: 'org-a', userId: 'user-1' }]);
    expect(await removeMember({ memberships }, 'org-a', 'user-1')).toEqual({
      orgId: 'org-a',
      userId: 'user-1',
      removed: true,
    });
    expect(await memberships.isMember('org-a', 'user-1')).toBe(false);
    expect(await removeMember({ memberships }, 'org-a', 'user-1')).toEqual({
      orgId: 'org-a',
      userId: 'user-1',
      removed: false,
    });
  });

  it.each([
    ['org', '', 'user-1'],
    ['user', 'org-a', ' '],
  ])('refuses an empty --%s', async (option, orgId, userId) => {
    const memberships = new FakeMemberships([{ orgId: 'org-a', userId: ' ' }]);
    await expect(
      addMember({ memberships, clock: fixedClock('2026-01-01T00:00:00.000Z') }, orgId, userId),
    ).rejects.toThrow(new ValidationError(`--${option} must not be empty`));
    await expect(removeMember({ memberships }, orgId, userId)).rejects.toThrow(
      new ValidationError(`--${option} must not be empty`),
    );
    expect(await memberships.isMember('org-a', ' ')).toBe(true);
  });
});

describe('createApiKey', () => {
  const setup = () => ({
    apiKeys: new FakeApiKeys(),
    throttling: new FakeKeyThrottling(),
    clock: fixedClock(NOW),
    random: sequenceRandom(),
  });

  it('returns a recognisable key: esk_ followed by 43 base64url characters (256 bits)', async () => {
    const deps = setup();
    const { apiKey } = await createApiKey(deps, 'user-1', null);
    expect(apiKey).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect(deps.random.sizes[0]).toBe(32);
  });

  it('returns the key, its public id and its owner', async () => {
    const deps = setup();
    const created = await createApiKey(deps, 'user-1', 'CI');
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'expiresAt', 'keyId', 'userId']);
    expect(created.expiresAt).toBeNull();
    expect(created.userId).toBe('user-1');
    expect(created.keyId).toMatch(/^key_[0-9a-f]{24}$/);
  });

  it('stores only the SHA-256 hash of the key, ACTIVE, with its creation time, name and registration', async () => {
    const deps = setup();
    const { apiKey, keyId } = await createApiKey(deps, 'user-1', 'CI');
    const stored = await deps.apiKeys.list();
    expect(stored).toEqual([
      {
        keyHash: sha256(apiKey),
        keyId,
        userId: 'user-1',
        name: 'CI',
        status: 'ACTIVE',
        createdAt: NOW,
        revokedAt: null,
        limits: null,
        usagePlanAt: NOW,
      },
    ]);
    expect(stored[0]).not.toHaveProperty('apiKey');
    expect(JSON.stringify(stored)).not.toContain(apiKey);
    expect(JSON.stringify(stored)).not.toContain(apiKey.slice(4));
    expect(await deps.apiKeys.getByHash(sha256(apiKey))).toMatchObject({ keyId, status: 'ACTIVE' });
  });

  it('issues a different key and id every time with real randomness', async () => {
    const deps = {
      apiKeys: new FakeApiKeys(),
      throttling: RECORD_ONLY_THROTTLING,
      clock: fixedClock(NOW),
      random: cryptoRandom,
    };
    const first = await createApiKey(deps, 'user-1', null);
    const second = await createApiKey(deps, 'user-1', null);
    expect(second.apiKey).not.toBe(first.apiKey);
    expect(second.keyId).not.toBe(first.keyId);
    expect(await deps.apiKeys.list()).toHaveLength(2);
  });

  it('refuses an empty user and stores nothing', async () => {
    const deps = setup();
    await expect(createApiKey(deps, '  ', null)).rejects.toThrow(
      new ValidationError('--user must not be empty'),
    );
    expect(await deps.apiKeys.list()).toEqual([]);
    expect(deps.throttling.calls).toEqual([]);
  });

  it('registers the new key with the platform’s throttling, at the defaults', async () => {
    const deps = setup();
    const { keyId } = await createApiKey(deps, 'user-1', null);
    expect(deps.throttling.calls).toEqual([`register ${keyId}`]);
  });

  it('stores no key when the throttling cannot register it, so no record exists whose key nobody saw', async () => {
    const deps = setup();
    deps.throttling.failure = new Error('API Gateway is unreachable');
    await expect(createApiKey(deps, 'user-1', null)).rejects.toThrow('API Gateway is unreachable');
    expect(await deps.apiKeys.list()).toEqual([]);
  });
});

describe('revokeApiKey', () => {
  it('marks the key REVOKED with the revocation time and returns it without its hash', async () => {
    const apiKeys = new FakeApiKeys();
    const throttling = new FakeKeyThrottling();
    const { apiKey, keyId } = await createApiKey(
      { apiKeys, throttling, clock: fixedClock(NOW), random: sequenceRandom() },
      'user-1',
      'CI',
    );
    const revoked = await revokeApiKey(
      { apiKeys, throttling, clock: fixedClock(LATER), actor: 'cli:ada' },
      keyId,
    );
    expect(revoked).toEqual({
      keyId,
      userId: 'user-1',
      name: 'CI',
      status: 'REVOKED',
      createdAt: NOW,
      revokedAt: LATER,
      revokedBy: 'cli:ada',
      limits: null,
      expiresAt: null,
      lastUsedAt: null,
    });
    expect(revoked).not.toHaveProperty('keyHash');
    expect(await apiKeys.getByHash(sha256(apiKey))).toMatchObject({ status: 'REVOKED', revokedAt: LATER });
  });

  it('throws for an unknown key id, naming it', async () => {
    const apiKeys = new FakeApiKeys();
    const throttling = new FakeKeyThrottling();
    const outcome = revokeApiKey({ apiKeys, throttling, clock: fixedClock(LATER) }, 'key_unknown');
    await expect(outcome).rejects.toBeInstanceOf(ApiKeyNotFoundError);
    await expect(outcome).rejects.toThrow('No API key has id "key_unknown"');
    expect(throttling.calls).toEqual([]);
  });

  it('refuses an empty key id', async () => {
    const deps = {
      apiKeys: new FakeApiKeys(),
      throttling: new FakeKeyThrottling(),
      clock: fixedClock(LATER),
    };
    await expect(revokeApiKey(deps, '')).rejects.toThrow(new ValidationError('--key-id must not be empty'));
  });

  it('removes the key from the platform’s throttling after revoking it, and again on a repeated revoke', async () => {
    const apiKeys = new FakeApiKeys([apiKeyRecord(sha256('k'), { keyId: 'key_1' })]);
    const throttling = new FakeKeyThrottling();
    await revokeApiKey({ apiKeys, throttling, clock: fixedClock(LATER) }, 'key_1');
    await revokeApiKey({ apiKeys, throttling, clock: fixedClock(LATER) }, 'key_1');
    expect(throttling.calls).toEqual(['remove key_1', 'remove key_1']);
  });

  it('keeps the key revoked when the platform fails, so running the command again finishes the job', async () => {
    const apiKeys = new FakeApiKeys([apiKeyRecord(sha256('k'), { keyId: 'key_1' })]);
    const throttling = new FakeKeyThrottling();
    throttling.failure = new Error('API Gateway is unreachable');
    await expect(revokeApiKey({ apiKeys, throttling, clock: fixedClock(LATER) }, 'key_1')).rejects.toThrow(
      'API Gateway is unreachable',
    );
    expect(await apiKeys.getByHash(sha256('k'))).toMatchObject({ status: 'REVOKED' });
  });
});

describe('setRateLimit', () => {
  const HASH = sha256('k');
  const setup = (overrides: Parameters<typeof apiKeyRecord>[1] = {}) => ({
    apiKeys: new FakeApiKeys([apiKeyRecord(HASH, { keyId: 'key_1', ...overrides })]),
    throttling: new FakeKeyThrottling(),
  });

  it('stores the key’s own limits, then applies them to the platform, and returns the key', async () => {
    const deps = setup();
    const result = await setRateLimit(deps, 'key_1', { rate: 5, burst: 10 });
    expect(result).toMatchObject({ keyId: 'key_1', limits: { rate: 5, burst: 10 } });
    expect(result).not.toHaveProperty('keyHash');
    expect((await deps.apiKeys.getByHash(HASH))?.limits).toEqual({ rate: 5, burst: 10 });
    expect(deps.throttling.calls).toEqual(['apply key_1 5/10']);
  });

  it('clears the key’s own limits with null: the defaults apply again, in the record and the platform', async () => {
    const deps = setup({ limits: { rate: 5, burst: 10 } });
    expect(await setRateLimit(deps, 'key_1', null)).toMatchObject({ limits: null });
    expect((await deps.apiKeys.getByHash(HASH))?.limits).toBeNull();
    expect(deps.throttling.calls).toEqual(['apply key_1 defaults']);
  });

  it.each([
    ['a rate of 0', { rate: 0, burst: 10 }, '--rate must be an integer from 1 to 10000'],
    ['a rate above 10000', { rate: 10_001, burst: 10 }, '--rate must be an integer from 1 to 10000'],
    ['a fractional rate', { rate: 1.5, burst: 10 }, '--rate must be an integer from 1 to 10000'],
    [
      'a rate that is no number',
      { rate: Number.NaN, burst: 10 },
      '--rate must be an integer from 1 to 10000',
    ],
    ['a burst of 0', { rate: 5, burst: 0 }, '--burst must be an integer from 1 to 5000'],
    ['a burst above 5000', { rate: 5, burst: 5_001 }, '--burst must be an integer from 1 to 5000'],
  ])('refuses %s and changes nothing', async (_name, limits, message) => {
    const deps = setup();
    await expect(setRateLimit(deps, 'key_1', limits)).rejects.toThrow(new ValidationError(message));
    expect((await deps.apiKeys.getByHash(HASH))?.limits).toBeNull();
    expect(deps.throttling.calls).toEqual([]);
  });

  it('accepts the bounds themselves', async () => {
    const deps = setup();
    await setRateLimit(deps, 'key_1', { rate: 1, burst: 1 });
    await setRateLimit(deps, 'key_1', { rate: 10_000, burst: 5_000 });
    expect(deps.throttling.calls).toEqual(['apply key_1 1/1', 'apply key_1 10000/5000']);
  });

  it('refuses a revoked key, naming it, and leaves the platform alone', async () => {
    const deps = setup({ status: 'REVOKED', revokedAt: NOW });
    await expect(setRateLimit(deps, 'key_1', { rate: 5, burst: 10 })).rejects.toThrow(
      new ValidationError('API key "key_1" is revoked'),
    );
    expect(deps.throttling.calls).toEqual([]);
  });

  it('refuses an unknown or empty key id', async () => {
    const deps = setup();
    await expect(setRateLimit(deps, 'key_unknown', null)).rejects.toThrow(
      new ValidationError('No API key has id "key_unknown"'),
    );
    await expect(setRateLimit(deps, ' ', null)).rejects.toThrow(
      new ValidationError('--key-id must not be empty'),
    );
    expect(deps.throttling.calls).toEqual([]);
  });

  it('keeps the stored limits when the platform fails, so running the command again mends it', async () => {
    const deps = setup();
    deps.throttling.failure = new Error('API Gateway is unreachable');
    await expect(setRateLimit(deps, 'key_1', { rate: 5, burst: 10 })).rejects.toThrow('unreachable');
    expect((await deps.apiKeys.getByHash(HASH))?.limits).toEqual({ rate: 5, burst: 10 });
  });
});

describe('syncRateLimits', () => {
  it('applies every active key’s limits (own or default) and removes every revoked key', async () => {
    const apiKeys = new FakeApiKeys([
      apiKeyRecord(sha256('a'), { keyId: 'key_a' }),
      apiKeyRecord(sha256('b'), { keyId: 'key_b', limits: { rate: 2, burst: 4 } }),
      apiKeyRecord(sha256('c'), { keyId: 'key_c', status: 'REVOKED', revokedAt: NOW }),
    ]);
    const throttling = new FakeKeyThrottling();
    await expect(syncRateLimits({ apiKeys, throttling, clock: fixedClock(NOW) })).resolves.toEqual({
      active: 2,
      revoked: 1,
    });
    expect(throttling.calls.sort()).toEqual(['apply key_a defaults', 'apply key_b 2/4', 'remove key_c']);
  });

  it('records each active key as registered, so the authorizer never registers it again', async () => {
    const earlier = '2026-01-01T00:00:00.000Z';
    const apiKeys = new FakeApiKeys([
      apiKeyRecord(sha256('a'), { keyId: 'key_a' }),
      apiKeyRecord(sha256('b'), { keyId: 'key_b', usagePlanAt: earlier }),
      apiKeyRecord(sha256('c'), { keyId: 'key_c', status: 'REVOKED', revokedAt: NOW }),
    ]);
    await syncRateLimits({ apiKeys, throttling: new FakeKeyThrottling(), clock: fixedClock(NOW) });
    expect((await apiKeys.getByHash(sha256('a')))?.usagePlanAt).toBe(NOW);
    expect((await apiKeys.getByHash(sha256('b')))?.usagePlanAt).toBe(earlier);
    expect((await apiKeys.getByHash(sha256('c')))?.usagePlanAt).toBeUndefined();
  });
});

describe('listApiKeys', () => {
  async function twoUsers() {
    const apiKeys = new FakeApiKeys();
    const deps = {
      apiKeys,
      throttling: RECORD_ONLY_THROTTLING,
      clock: fixedClock(NOW),
      random: sequenceRandom(),
    };
    const a = await createApiKey(deps, 'user-a', 'first');
    const b = await createApiKey(deps, 'user-b', null);
    return { apiKeys, a, b };
  }

  it('lists every key without its hash nor the key', async () => {
    const { apiKeys, a, b } = await twoUsers();
    const listed = await listApiKeys({ apiKeys });
    expect(listed.map((k) => k.keyId).sort()).toEqual([a.keyId, b.keyId].sort());
    for (const summary of listed) {
      expect(Object.keys(summary).sort()).toEqual([
        'createdAt',
        'expiresAt',
        'keyId',
        'lastUsedAt',
        'limits',
        'name',
        'revokedAt',
        'status',
        'userId',
      ]);
    }
    const text = JSON.stringify(listed);
    for (const secret of [a.apiKey, b.apiKey, sha256(a.apiKey), sha256(b.apiKey)]) {
      expect(text).not.toContain(secret);
    }
  });

  it.each(['', '  '])('refuses the user %j rather than listing every user’s keys', async (user) => {
    const { apiKeys } = await twoUsers();
    await expect(listApiKeys({ apiKeys }, user)).rejects.toThrow(
      new ValidationError('--user must not be empty'),
    );
  });

  it('lists only the keys of one user when asked', async () => {
    const { apiKeys, a } = await twoUsers();
    const listed = await listApiKeys({ apiKeys }, 'user-a');
    expect(listed).toEqual([
      {
        keyId: a.keyId,
        userId: 'user-a',
        name: 'first',
        status: 'ACTIVE',
        createdAt: NOW,
        revokedAt: null,
        limits: null,
        expiresAt: null,
        lastUsedAt: null,
      },
    ]);
  });
});

describe('operators’ changes, each recorded as its operator’s and each idempotent', () => {
  const operator = (clock = fixedClock(NOW)) => ({ actor: 'arn:aws:iam::123456789012:user/ops', clock });

  it('writes a board once and records who wrote it; the same state again writes nothing', async () => {
    const boards = new FakeBoards();
    const first = await applyBoard({ boards, ...operator() }, board());
    expect(first).toEqual({
      outcome: 'created',
      board: { ...board(), updatedBy: 'arn:aws:iam::123456789012:user/ops', updatedAt: NOW },
    });
    const again = await applyBoard({ boards, ...operator(fixedClock(LATER)) }, board());
    expect(again.outcome).toBe('unchanged');
    expect((await boards.get('board-1'))?.updatedAt).toBe(NOW);
    const renamed = await applyBoard({ boards, ...operator(fixedClock(LATER)) }, board({ name: 'Plan' }));
    expect(renamed).toMatchObject({ outcome: 'updated', board: { name: 'Plan', updatedAt: LATER } });
  });

  it('refuses a key owner id an operator’s identity could be taken for', async () => {
    const deps = {
      apiKeys: new FakeApiKeys(),
      throttling: new FakeKeyThrottling(),
      clock: fixedClock(NOW),
      random: sequenceRandom(),
    };
    for (const userId of ['arn:aws:iam::1:user/x', 'cli:ada']) {
      await expect(createApiKey(deps, userId, null)).rejects.toThrow('those name operators');
    }
    expect(await deps.apiKeys.list()).toEqual([]);
  });

  it('gives a key its expiry in whole days from its creation, and records who issued it', async () => {
    const deps = {
      apiKeys: new FakeApiKeys(),
      throttling: new FakeKeyThrottling(),
      clock: fixedClock(NOW),
      random: sequenceRandom(),
      actor: 'cli:ada',
    };
    const created = await createApiKey(deps, 'user-1', null, { expiresInDays: 30 });
    expect(created.expiresAt).toBe('2026-03-31T12:00:00.000Z');
    expect(await deps.apiKeys.list()).toEqual([
      expect.objectContaining({ expiresAt: '2026-03-31T12:00:00.000Z', createdBy: 'cli:ada' }),
    ]);
    for (const days of [0, 1.5, 3_651]) {
      await expect(createApiKey(deps, 'user-1', null, { expiresInDays: days })).rejects.toThrow(
        'expiresInDays must be a whole number of days from 1 to 3650',
      );
    }
  });

  it('revokes a key and, asked to, ends every session it created with one cut-off on the key', async () => {
    const apiKeys = new FakeApiKeys([apiKeyRecord(sha256('k'), { keyId: 'key_1' })]);
    const sessions = new FakeSessions([
      storedSession({ id: 'a', createdByKeyId: 'key_1', createdAt: '2026-03-01T11:00:00.000Z' }),
      storedSession({ id: 'b', createdByKeyId: 'key_2', createdAt: '2026-03-01T11:00:00.000Z' }),
    ]);
    const revoked = await revokeApiKey(
      {
        apiKeys,
        throttling: new FakeKeyThrottling(),
        cutoffs: sessions,
        random: sequenceRandom(),
        ...operator(),
      },
      'key_1',
      { endSessions: true },
    );
    expect(revoked).toMatchObject({
      status: 'REVOKED',
      sessionsEndedAt: NOW,
      revokedBy: 'arn:aws:iam::123456789012:user/ops',
    });
    expect(sessions.calls.filter((call) => call === 'writeCutoff')).toHaveLength(1);
    const [a, b] = await sessions.applyCutoffs(sessions.created);
    expect(a).toMatchObject({ revokedAt: NOW, revokedByUserId: 'arn:aws:iam::123456789012:user/ops' });
    expect(b?.revokedAt).toBeNull();
  });

  it('removes a member and, asked to, ends the sessions the member created on that organization’s boards only', async () => {
    const memberships = new FakeMemberships([{ orgId: 'org-a', userId: 'member' }]);
    const at = '2026-03-01T11:00:00.000Z';
    const sessions = new FakeSessions([
      storedSession({ id: 'mine-here', orgId: 'org-a', createdByUserId: 'member', createdAt: at }),
      storedSession({ id: 'mine-elsewhere', orgId: 'org-b', createdByUserId: 'member', createdAt: at }),
      storedSession({ id: 'colleague', orgId: 'org-a', createdByUserId: 'colleague', createdAt: at }),
    ]);
    const removed = await removeMember(
      { memberships, cutoffs: sessions, random: sequenceRandom(), ...operator() },
      'org-a',
      'member',
      { endSessions: true },
    );
    expect(removed).toEqual({ orgId: 'org-a', userId: 'member', removed: true, sessionsEndedAt: NOW });
    const ended = (await sessions.applyCutoffs(sessions.created)).map((s) => [s.id, s.revokedAt]);
    expect(ended).toEqual([
      ['mine-here', NOW],
      ['mine-elsewhere', null],
      ['colleague', null],
    ]);
  });

  it('ends a removed member’s sessions of the organization’s tenant only, not those it made on its public boards as a tenant of its own', async () => {
    const at = '2026-03-01T11:00:00.000Z';
    const sessions = new FakeSessions([
      storedSession({ id: 'as-member', orgId: 'org-a', createdByUserId: 'member', createdAt: at }),
      storedSession({
        id: 'own-tenant',
        orgId: 'org-a',
        createdByUserId: 'member',
        tenant: { kind: 'keyOwner', id: 'member' },
        createdAt: at,
      }),
    ]);
    await removeMember(
      {
        memberships: new FakeMemberships([{ orgId: 'org-a', userId: 'member' }]),
        cutoffs: sessions,
        random: sequenceRandom(),
        ...operator(),
      },
      'org-a',
      'member',
      { endSessions: true },
    );
    const ended = (await sessions.applyCutoffs(sessions.created)).map((s) => [s.id, s.revokedAt]);
    expect(ended).toEqual([
      ['as-member', NOW],
      ['own-tenant', null],
    ]);
  });

  it('keeps the records of revoked keys, removed members and deleted boards bounded and expiring, whatever the number of calls', async () => {
    const sessions = new FakeSessions([]);
    let now = Date.parse(NOW);
    const clock = {
      reads: 0,
      now: () => {
        now += 1_000;
        return new Date(now);
      },
    };
    const deps = {
      apiKeys: new FakeApiKeys([apiKeyRecord(sha256('k'), { keyId: 'key_1' })]),
      throttling: new FakeKeyThrottling(),
      memberships: new FakeMemberships([]),
      boards: new FakeBoards([]),
      cutoffs: sessions,
      random: sequenceRandom(),
      ...operator(clock),
    };
    for (let n = 0; n < 1_000; n++) {
      await revokeApiKey(deps, 'key_1', { endSessions: true });
      await removeMember(deps, 'org-a', 'member', { endSessions: true });
      await deps.boards.put(board());
      await deleteBoard(deps, 'org-a', 'board-1');
    }
    const records = sessions.storedCutoffs();
    expect(records.map((r) => JSON.parse(r.key)[0]).sort()).toEqual(['board', 'key', 'orgCreator']);
    for (const record of records) {
      expect(record.entries.length).toBeLessThanOrEqual(CUTOFF_ENTRIES_MAX);
      // One write per call, never a read of the sessions: the record expires with the default lifetime
      // after its last cut-off until the logouts' pass tells a later expiry.
      for (const entry of record.entries)
        expect(entry.until).toBe(Date.parse(entry.at) / 1000 + CUTOFF_UNSEEN_LIFETIME_SECONDS);
      const last = Math.max(...record.entries.map((entry) => Date.parse(entry.at) / 1000));
      expect(record.expiry).toBe(last + CUTOFF_UNSEEN_LIFETIME_SECONDS);
      expect(last).toBeGreaterThan(now / 1000 - 10);
    }
    expect(sessions.calls.filter((call) => call === 'writeCutoff')).toHaveLength(3_000);
    expect(sessions.calls.filter((call) => call.startsWith('coveredPage') || call === 'listAll')).toEqual([]);
  });

  it('deletes a board of the organization after ending its sessions; another organization’s board is not found', async () => {
    const boards = new FakeBoards([board()]);
    const sessions = new FakeSessions([
      storedSession({ id: 's', boardId: 'board-1', createdAt: '2026-03-01T11:00:00.000Z' }),
    ]);
    const deps = { boards, cutoffs: sessions, random: sequenceRandom(), ...operator() };
    await expect(deleteBoard(deps, 'org-b', 'board-1')).rejects.toBeInstanceOf(BoardNotFoundError);
    expect(sessions.calls).toEqual([]);
    expect(await deleteBoard(deps, 'org-a', 'board-1')).toEqual({
      boardId: 'board-1',
      orgId: 'org-a',
      deleted: true,
      sessionsEndedAt: NOW,
    });
    expect(await boards.get('board-1')).toBeUndefined();
    expect((await sessions.applyCutoffs(sessions.created))[0]?.revokedAt).toBe(NOW);
    await expect(deleteBoard(deps, 'org-a', 'board-1')).rejects.toBeInstanceOf(BoardNotFoundError);
  });
});
