import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Board } from '#lib/domain/board';
import { ValidationError } from '#lib/domain/errors';
import { cryptoRandom } from '#lib/platform/system';
import {
  addMember,
  BOARD_VISIBILITIES,
  createApiKey,
  createBoard,
  listApiKeys,
  removeMember,
  revokeApiKey,
} from '#lib/use-cases/admin';
import { FakeApiKeys, FakeBoards, FakeMemberships, fixedClock, sequenceRandom } from '#test/support/fakes';

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

  it('keeps the board’s origins when a replacement leaves them out, so framing never widens by accident', async () => {
    const boards = new FakeBoards([board({ embedOrigins: ORIGINS })]);
    const replaced = await createBoard({ boards }, board({ visibility: 'PRIVATE' }));
    expect(replaced).toEqual(board({ visibility: 'PRIVATE', embedOrigins: ORIGINS }));
  });

  it.each([
    ['an empty list', []],
    ['null', null],
  ])('removes the board’s origins when given %s, so the stage default applies', async (_label, value) => {
    const boards = new FakeBoards([board({ embedOrigins: ORIGINS })]);
    const cleared = await createBoard({ boards }, { ...board(), embedOrigins: value });
    expect(cleared).not.toHaveProperty('embedOrigins');
    expect(await boards.get('board-1')).toEqual(board());
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

describe('addMember and removeMember', () => {
  it('adds a member, idempotently, stamped with the injected clock', async () => {
    const memberships = new FakeMemberships();
    const clock = fixedClock('2026-04-05T06:07:08.009Z');
    expect(await addMember({ memberships, clock }, 'org-a', 'user-1')).toEqual({
      orgId: 'org-a',
      userId: 'user-1',
      member: true,
    });
    await addMember({ memberships, clock }, 'org-a', 'user-1');
    expect(await memberships.isMember('org-a', 'user-1')).toBe(true);
    expect(await memberships.isMember('org-b', 'user-1')).toBe(false);
    expect(memberships.added.map((m) => m.addedAt)).toEqual([
      '2026-04-05T06:07:08.009Z',
      '2026-04-05T06:07:08.009Z',
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
  const setup = () => ({ apiKeys: new FakeApiKeys(), clock: fixedClock(NOW), random: sequenceRandom() });

  it('returns a recognisable key: esk_ followed by 43 base64url characters (256 bits)', async () => {
    const deps = setup();
    const { apiKey } = await createApiKey(deps, 'user-1', null);
    expect(apiKey).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect(deps.random.sizes[0]).toBe(32);
  });

  it('returns the key, its public id and its owner', async () => {
    const deps = setup();
    const created = await createApiKey(deps, 'user-1', 'CI');
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'keyId', 'userId']);
    expect(created.userId).toBe('user-1');
    expect(created.keyId).toMatch(/^key_[0-9a-f]{24}$/);
  });

  it('stores only the SHA-256 hash of the key, ACTIVE, with its creation time and name', async () => {
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
      },
    ]);
    expect(stored[0]).not.toHaveProperty('apiKey');
    expect(JSON.stringify(stored)).not.toContain(apiKey);
    expect(JSON.stringify(stored)).not.toContain(apiKey.slice(4));
    expect(await deps.apiKeys.getByHash(sha256(apiKey))).toMatchObject({ keyId, status: 'ACTIVE' });
  });

  it('issues a different key and id every time with real randomness', async () => {
    const deps = { apiKeys: new FakeApiKeys(), clock: fixedClock(NOW), random: cryptoRandom };
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
  });
});

describe('revokeApiKey', () => {
  it('marks the key REVOKED with the revocation time and returns it without its hash', async () => {
    const apiKeys = new FakeApiKeys();
    const { apiKey, keyId } = await createApiKey(
      { apiKeys, clock: fixedClock(NOW), random: sequenceRandom() },
      'user-1',
      'CI',
    );
    const revoked = await revokeApiKey({ apiKeys, clock: fixedClock(LATER) }, keyId);
    expect(revoked).toEqual({
      keyId,
      userId: 'user-1',
      name: 'CI',
      status: 'REVOKED',
      createdAt: NOW,
      revokedAt: LATER,
    });
    expect(revoked).not.toHaveProperty('keyHash');
    expect(await apiKeys.getByHash(sha256(apiKey))).toMatchObject({ status: 'REVOKED', revokedAt: LATER });
  });

  it('throws for an unknown key id, naming it', async () => {
    const apiKeys = new FakeApiKeys();
    const outcome = revokeApiKey({ apiKeys, clock: fixedClock(LATER) }, 'key_unknown');
    await expect(outcome).rejects.toBeInstanceOf(ValidationError);
    await expect(outcome).rejects.toThrow('No API key has id "key_unknown"');
  });

  it('refuses an empty key id', async () => {
    await expect(revokeApiKey({ apiKeys: new FakeApiKeys(), clock: fixedClock(LATER) }, '')).rejects.toThrow(
      new ValidationError('--key-id must not be empty'),
    );
  });
});

describe('listApiKeys', () => {
  async function twoUsers() {
    const apiKeys = new FakeApiKeys();
    const deps = { apiKeys, clock: fixedClock(NOW), random: sequenceRandom() };
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
        'keyId',
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
      { keyId: a.keyId, userId: 'user-a', name: 'first', status: 'ACTIVE', createdAt: NOW, revokedAt: null },
    ]);
  });
});
