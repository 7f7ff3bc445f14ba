import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSessionAs } from '#test/support/create-session-as';
import { keysOf, SESSION_VIEW_FIELDS, sorted } from '#test/support/fixtures';
import { useKeyOwnerCast } from '#test/support/key-owner-cast';
import {
  apiCall,
  type CallResult,
  call,
  ensureStatus,
  type KeyOwnerFixture,
  keyOwner,
  removeMembership,
  storeSession,
} from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The session as a managed resource, over HTTP on the local runtime: retrieve, list, revoke one, revoke
 * a user's sessions, who may do each, and what the embed page does once a session is revoked.
 */
const runtime = useTestRuntime();
const { demo, owner, colleague, outsider, outsiderSecondKey, otherTenant } = useKeyOwnerCast(runtime);

const NOT_FOUND = { error: 'Not Found', message: 'No session with this id was found' };

interface SessionBody {
  id: string;
  boardId: string;
  userId: string;
  status: string;
  revokedAt: string | null;
  createdAt: string;
  [field: string]: unknown;
}

/** Creates a session as `who`; returns the session and its token. */
const create = (who: KeyOwnerFixture, body: Record<string, unknown>) =>
  createSessionAs<SessionBody>(runtime, who, body);

const retrieve = (who: KeyOwnerFixture, id: string) =>
  apiCall(runtime, who.apiKey, 'GET', `/api/embed/sessions/${id}`);
const revoke = (who: KeyOwnerFixture, id: string) =>
  apiCall(runtime, who.apiKey, 'POST', `/api/embed/sessions/${encodeURIComponent(id)}/revoke`);
const revokeAll = (who: KeyOwnerFixture, body: unknown) =>
  apiCall(runtime, who.apiKey, 'POST', '/api/embed/sessions/revoke', body);
const list = (who: KeyOwnerFixture, query: Record<string, string>) =>
  apiCall(runtime, who.apiKey, 'GET', `/api/embed/sessions?${new URLSearchParams(query)}`);
const embedJson = (token: string) =>
  call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });

/** Every id of a listing, following nextCursor to the end. */
async function listAll(who: KeyOwnerFixture, query: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: CallResult = await list(who, { ...query, ...(cursor ? { cursor } : {}) });
    ensureStatus(page, 200);
    ids.push(...(page.body.data as SessionBody[]).map((s) => s.id));
    cursor = page.body.nextCursor as string | null;
  } while (cursor);
  return ids;
}

function expectNoCredential(result: CallResult, token: string) {
  expect(result.text).not.toContain(token);
  expect(result.text).not.toContain(createHash('sha256').update(token).digest('hex'));
  expect(result.text).not.toContain('tokenHash');
  expect(result.headers.get('cache-control')).toBe('no-store');
}

describe('GET /api/embed/sessions/{id}', () => {
  it('returns the session with its status and revocation time, never its token or hash', async () => {
    const { session, token } = await create(owner, { userId: 'u-get', boardId: demo.privateBoardId });
    const result = await retrieve(owner, session.id);
    expect(result.status).toBe(200);
    expect(Object.keys(result.body)).toEqual(['session']);
    const view = result.body.session as SessionBody;
    expect(keysOf(view)).toEqual(sorted(SESSION_VIEW_FIELDS));
    const { token: _t, ...created } = session;
    expect(view).toEqual({ ...created, status: 'active', revokedAt: null });
    expectNoCredential(result, token);
  });

  it('shows an expired session as expired', async () => {
    const { session } = await create(owner, { userId: 'u-exp', expiresInSeconds: 1 });
    const status = async () => ((await retrieve(owner, session.id)).body.session as SessionBody).status;
    await expect.poll(status, { timeout: 5_000, interval: 200 }).toBe('expired');
  });
});

describe('who may see and revoke a session', () => {
  let privateSession: SessionBody;
  let publicSession: SessionBody;
  let otherTenantSession: SessionBody;

  beforeAll(async () => {
    privateSession = (await create(owner, { userId: 'shared-42', boardId: demo.privateBoardId })).session;
    publicSession = (await create(outsider, { userId: 'shared-42', boardId: demo.publicBoardId })).session;
    otherTenantSession = (await create(otherTenant, { userId: 'shared-42', boardId: demo.otherOrgBoardId }))
      .session;
  });

  it.each([
    ['the creator', 200, owner, () => privateSession],
    ['a member of the board’s organization who did not create it', 200, colleague, () => privateSession],
    ['an outsider', 404, outsider, () => privateSession],
    ['another tenant', 404, otherTenant, () => privateSession],
    ['the creator of a session on another organization’s public board', 200, outsider, () => publicSession],
    ['the creator, with another of its keys', 200, outsiderSecondKey, () => publicSession],
    ['a member of that public board’s organization', 200, owner, () => publicSession],
    ['a tenant of neither', 404, otherTenant, () => publicSession],
  ] as const)('%s: %i', async (_label, status, who, target) => {
    const result = await retrieve(who, target().id);
    expect(result.status).toBe(status);
    if (status === 404) expect(result.body).toEqual(NOT_FOUND);
  });

  it('answers a session that does not exist exactly like someone else’s, with no 403 anywhere', async () => {
    const missing = await retrieve(owner, '00000000-0000-4000-8000-000000000000');
    const foreign = await retrieve(owner, otherTenantSession.id);
    const malformed = await retrieve(owner, 'not-a-session-id');
    for (const result of [missing, foreign, malformed]) {
      expect(result.status).toBe(404);
      expect(result.body).toEqual(NOT_FOUND);
    }
    expect((await revoke(owner, otherTenantSession.id)).status).toBe(404);
    expect(((await retrieve(otherTenant, otherTenantSession.id)).body.session as SessionBody).status).toBe(
      'active',
    );
  });

  it('never mixes two tenants’ sessions of the same external user in a listing or a revoke-all', async () => {
    // The outsider's "shared-42" on org_demo's public board is another tenant's user: org_demo reaches
    // that session by id and by board, but it is not org_demo's "shared-42".
    expect(await listAll(owner, { userId: 'shared-42' })).toEqual([privateSession.id]);
    expect(await listAll(otherTenant, { userId: 'shared-42' })).toEqual([otherTenantSession.id]);
    expect(await listAll(outsider, { userId: 'shared-42' })).toEqual([publicSession.id]);
    expect(await listAll(outsiderSecondKey, { userId: 'shared-42' })).toEqual([publicSession.id]);
    expect(await listAll(outsider, { boardId: demo.publicBoardId, userId: 'shared-42' })).toEqual([
      publicSession.id,
    ]);
    expect(await listAll(outsider, { boardId: demo.privateBoardId })).toEqual([]);
    expect(await listAll(owner, { boardId: demo.publicBoardId, userId: 'shared-42' })).toEqual([]);
    expect(await listAll(owner, { boardId: demo.publicBoardId })).toContain(publicSession.id);

    const strangers = (await create(outsider, { userId: 'ov-42', boardId: demo.publicBoardId })).session;
    const ours = (await create(owner, { userId: 'ov-42', boardId: demo.publicBoardId })).session;
    expect((await revokeAll(owner, { userId: 'ov-42' })).body).toEqual({ revoked: 1 });
    expect(((await retrieve(owner, ours.id)).body.session as SessionBody).status).toBe('revoked');
    expect(((await retrieve(outsider, strangers.id)).body.session as SessionBody).status).toBe('active');
  });

  it('lets a creator outside the board’s organization revoke and list with any of its keys', async () => {
    const { session } = await create(outsider, { userId: 'second-key', boardId: demo.publicBoardId });
    expect(await listAll(outsiderSecondKey, { userId: 'second-key' })).toEqual([session.id]);
    const revoked = await revoke(outsiderSecondKey, session.id);
    expect(revoked.status).toBe(200);
    expect((revoked.body.session as SessionBody).status).toBe('revoked');
  });

  it('narrows a non-member creator’s listing and revoke-all to the board it names', async () => {
    await putPublicBoard(runtime, 'board_public_two', 'org_other');
    const onFirst = (await create(outsider, { userId: 'two-boards', boardId: demo.publicBoardId })).session;
    const onSecond = (await create(outsider, { userId: 'two-boards', boardId: 'board_public_two' })).session;
    expect(await listAll(outsider, { userId: 'two-boards', boardId: 'board_public_two' })).toEqual([
      onSecond.id,
    ]);
    expect((await revokeAll(outsider, { userId: 'two-boards', boardId: 'board_public_two' })).body).toEqual({
      revoked: 1,
    });
    expect(((await retrieve(outsider, onFirst.id)).body.session as SessionBody).status).toBe('active');
    expect(((await retrieve(outsider, onSecond.id)).body.session as SessionBody).status).toBe('revoked');
  });

  it('gives two concurrent revokes the same first revocation', async () => {
    const { session } = await create(owner, { userId: 'u-concurrent' });
    const [a, b] = await Promise.all([revoke(owner, session.id), revoke(colleague, session.id)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((a.body.session as SessionBody).revokedAt).toBe((b.body.session as SessionBody).revokedAt);
  });

  it('loses access at once when the membership is removed', async () => {
    const member = await keyOwner(runtime, 'leaver', ['org_demo']);
    expect((await retrieve(member, privateSession.id)).status).toBe(200);
    await removeMembership(runtime, 'org_demo', 'leaver');
    expect((await retrieve(member, privateSession.id)).status).toBe(404);
    expect((await revoke(member, privateSession.id)).status).toBe(404);
    expect(await listAll(member, { userId: 'shared-42' })).toEqual([]);
  });
});

describe('GET /api/embed/sessions', () => {
  it('lists newest first with a cursor, never repeating or skipping a session while more are created', async () => {
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await create(owner, { userId: 'pager' })).session.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: CallResult = await list(owner, {
        userId: 'pager',
        limit: '3',
        ...(cursor ? { cursor } : {}),
      });
      expect(page.status).toBe(200);
      expect(Object.keys(page.body).sort()).toEqual(['data', 'nextCursor']);
      const data = page.body.data as SessionBody[];
      expect(data.length).toBeLessThanOrEqual(3);
      seen.push(...data.map((s) => s.id));
      cursor = page.body.nextCursor as string | null;
      pages += 1;
      // Sessions created between pages are newer than the cursor: they belong before it, not in later pages.
      await create(owner, { userId: 'pager' });
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
  });

  it('sorts newest first by createdAt and answers null as the last page’s cursor', async () => {
    await create(owner, { userId: 'sorter' });
    await create(owner, { userId: 'sorter' });
    const page = await list(owner, { userId: 'sorter' });
    const data = page.body.data as SessionBody[];
    expect(data.map((s) => s.createdAt)).toEqual(
      data
        .map((s) => s.createdAt)
        .sort()
        .reverse(),
    );
    expect(page.body.nextCursor).toBeNull();
  });

  it('filters by status, computed when read', async () => {
    const active = (await create(owner, { userId: 'status-user' })).session;
    const revoked = (await create(owner, { userId: 'status-user' })).session;
    expect((await revoke(owner, revoked.id)).status).toBe(200);
    // Expired a second ago, its item still stored, as DynamoDB keeps it for a while after its TTL.
    await storeSession(
      runtime,
      'Expired_status_token_00000000000',
      {
        boardId: demo.publicBoardId,
        orgId: 'org_demo',
        userId: 'status-user',
        expiresAt: new Date(Date.now() - 1_000).toISOString(),
      },
      { ttlSeconds: Math.ceil(Date.now() / 1000) + 3_600 },
    );
    const ids = async (status: string) =>
      ((await list(owner, { userId: 'status-user', status })).body.data as SessionBody[]).map((s) => ({
        id: s.id,
        status: s.status,
      }));
    expect(await ids('active')).toEqual([{ id: active.id, status: 'active' }]);
    expect(await ids('revoked')).toEqual([{ id: revoked.id, status: 'revoked' }]);
    expect((await ids('expired')).map((s) => s.status)).toEqual(['expired']);
  });

  it('lists a board’s sessions for a member, and only their own for a creator outside its organization', async () => {
    const board = demo.publicBoardId;
    const mine = (await create(outsider, { userId: 'board-lister', boardId: board })).session;
    const theirs = (await create(owner, { userId: 'board-lister', boardId: board })).session;
    expect(await listAll(colleague, { boardId: board })).toEqual(
      expect.arrayContaining([theirs.id, mine.id]),
    );
    // By user, each tenant sees its own user: the colleague's organization created `theirs`.
    expect(await listAll(colleague, { boardId: board, userId: 'board-lister' })).toEqual([theirs.id]);
    expect(await listAll(outsider, { boardId: board, userId: 'board-lister' })).toEqual([mine.id]);
  });

  it.each([
    [{}, 'userId or boardId is required (or both)'],
    [{ userId: 'u', limit: '0' }, 'limit must be an integer from 1 to 100'],
    [{ userId: 'u', limit: '101' }, 'limit must be an integer from 1 to 100'],
    [{ userId: 'u', limit: 'ten' }, 'limit must be an integer from 1 to 100'],
    [{ userId: 'u', status: 'ended' }, 'status must be one of active, expired, revoked'],
    [{ userId: 'u', sort: 'asc' }, 'sort is not an allowed query parameter'],
    [{ userId: ' ' }, 'userId must not be blank'],
    [{ userId: 'u', cursor: 'not a cursor' }, 'cursor is invalid or was issued for another query'],
  ])('answers 400 for %j: %s', async (query, message) => {
    const result = await list(owner, query as Record<string, string>);
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ error: 'Bad Request', message });
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'takes a query parameter or header named %s as an ordinary name: 400 for the unknown parameter, nothing for the header',
    async (name) => {
      const refused = await apiCall(
        runtime,
        owner.apiKey,
        'GET',
        `/api/embed/sessions?userId=u&${name}=1&${name}=2`,
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('Bad Request');
      expect(refused.body.message).toMatch(new RegExp(`^${name} (must be given once|is not an allowed)`));
      const listed = await apiCall(runtime, owner.apiKey, 'GET', '/api/embed/sessions?userId=u', undefined, {
        [name]: 'x',
      });
      expect(listed.status).toBe(200);
    },
  );

  it('answers 400 for a parameter given twice', async () => {
    const result = await apiCall(runtime, owner.apiKey, 'GET', '/api/embed/sessions?userId=a&userId=b');
    expect(result.body).toEqual({ error: 'Bad Request', message: 'userId must be given once' });
  });

  it('refuses a tampered cursor, one from another query and one from another caller', async () => {
    for (let i = 0; i < 3; i++) await create(owner, { userId: 'cursor-user' });
    const first = await list(owner, { userId: 'cursor-user', limit: '1' });
    const cursor = String(first.body.nextCursor);
    expect((await list(owner, { userId: 'cursor-user', limit: '1', cursor })).status).toBe(200);
    const [payload, signature] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(String(payload), 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    // A well-formed position, only another one: the signature no longer matches.
    const moved = Buffer.from(
      JSON.stringify({ ...decoded, p: `2099${String(decoded.p).slice(4)}` }),
    ).toString('base64url');
    const tampered = `${moved}.${signature}`;
    // The same bytes in another spelling: the signature's last character changed in its unused bits.
    const respelled = `${payload}.${respell(String(signature))}`;
    expect(Buffer.from(respell(String(signature)), 'base64url')).toEqual(
      Buffer.from(String(signature), 'base64url'),
    );
    for (const [who, query] of [
      [owner, { userId: 'cursor-user', cursor: tampered }],
      [owner, { userId: 'cursor-user', cursor: respelled }],
      [owner, { userId: 'someone-else', cursor }],
      [owner, { userId: 'cursor-user', status: 'active', cursor }],
      [colleague, { userId: 'cursor-user', cursor }],
      [await keyOwner(runtime, demo.userId), { userId: 'cursor-user', cursor }],
    ] as const) {
      const result = await list(who, query);
      expect(result.status).toBe(400);
      expect(result.body.message).toBe('cursor is invalid or was issued for another query');
    }
  });
});

/** base64url text spelled otherwise for the same bytes: the unused low bit of its last character flipped. */
function respell(text: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(text.slice(-1));
  return `${text.slice(0, -1)}${alphabet[last ^ 1]}`;
}

describe('another tenant’s people on your public board', () => {
  /** What the board's organization sees of a session another tenant created there. */
  const OUTLINE_FIELDS = [
    'boardId',
    'boundAt',
    'createdAt',
    'createdByAnotherTenant',
    'expiresAt',
    'id',
    'revokedAt',
    'status',
  ];
  const PERSONAL = {
    userId: 'their-customer-7',
    email: 'grace@stranger.example',
    firstName: 'Grace',
    lastName: 'Hopper',
    avatarUrl: 'https://cdn.stranger.example/grace.png',
    plan: 'stranger-enterprise',
    metadata: { crm: 'stranger-crm-id-9' },
  };
  /** No personal value of the other tenant's user anywhere in the answer. */
  const expectNothingPersonal = (result: CallResult) => {
    for (const value of [...Object.values(PERSONAL).slice(0, -1), 'stranger-crm-id-9']) {
      expect(result.text).not.toContain(String(value));
    }
  };
  let theirs: SessionBody;

  beforeAll(async () => {
    theirs = (await create(outsider, { ...PERSONAL, boardId: demo.publicBoardId })).session;
  });

  it.each([
    ['the board’s organization (the demo key owner)', owner],
    ['another member of that organization', colleague],
  ])('%s reads only its outline by id, marked as another tenant’s', async (_label, who) => {
    const result = await retrieve(who, theirs.id);
    expect(result.status).toBe(200);
    expect(keysOf(result.body.session)).toEqual(OUTLINE_FIELDS);
    expect(result.body.session).toEqual({
      id: theirs.id,
      boardId: demo.publicBoardId,
      status: 'active',
      createdAt: theirs.createdAt,
      expiresAt: theirs.expiresAt,
      revokedAt: null,
      boundAt: null,
      createdByAnotherTenant: true,
    });
    expectNothingPersonal(result);
  });

  it('shows it whole to the tenant that created it, with any of its keys', async () => {
    for (const who of [outsider, outsiderSecondKey]) {
      const result = await retrieve(who, theirs.id);
      expect(keysOf(result.body.session)).toEqual(sorted(SESSION_VIEW_FIELDS));
      expect(result.body.session).toMatchObject(PERSONAL);
    }
  });

  it('lists it by board as an outline among the organization’s own, whole sessions', async () => {
    const { session: ours } = await create(owner, { userId: 'our-own-7', boardId: demo.publicBoardId });
    let cursor: string | null = null;
    const seen = new Map<string, Record<string, unknown>>();
    do {
      const page: CallResult = await list(owner, {
        boardId: demo.publicBoardId,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.status).toBe(200);
      expectNothingPersonal(page);
      for (const view of page.body.data as Array<Record<string, unknown>>) seen.set(String(view.id), view);
      cursor = page.body.nextCursor as string | null;
    } while (cursor);
    expect(keysOf(seen.get(theirs.id))).toEqual(OUTLINE_FIELDS);
    expect(keysOf(seen.get(ours.id))).toEqual(sorted(SESSION_VIEW_FIELDS));
    expect(seen.get(ours.id)).not.toHaveProperty('createdByAnotherTenant');
  });

  it('lets the organization revoke it, answering the outline; its creator sees it revoked, whole', async () => {
    const { session } = await create(outsider, { ...PERSONAL, boardId: demo.publicBoardId });
    const revoked = await revoke(owner, session.id);
    expect(revoked.status).toBe(200);
    expect(keysOf(revoked.body.session)).toEqual(OUTLINE_FIELDS);
    expect(revoked.body.session).toMatchObject({ status: 'revoked', createdByAnotherTenant: true });
    expectNothingPersonal(revoked);
    const seenByCreator = await retrieve(outsider, session.id);
    expect(seenByCreator.body.session).toMatchObject({ ...PERSONAL, status: 'revoked' });
  });

  it('shows a colleague’s session whole: the same tenant', async () => {
    const { session } = await create(colleague, { userId: 'colleague-7', boardId: demo.publicBoardId });
    const result = await retrieve(owner, session.id);
    expect(keysOf(result.body.session)).toEqual(sorted(SESSION_VIEW_FIELDS));
    expect(result.body.session).toMatchObject({ userId: 'colleague-7' });
  });
});

describe('POST /api/embed/sessions/{id}/revoke', () => {
  it('revokes, idempotently keeping the first revokedAt, and the embed link stops at the very next load', async () => {
    const { session, token } = await create(owner, { userId: 'u-revoke', boardId: demo.privateBoardId });
    expect((await embedJson(token)).status).toBe(200);
    const first = await revoke(colleague, session.id);
    expect(first.status).toBe(200);
    const revoked = first.body.session as SessionBody;
    expect(revoked).toMatchObject({ id: session.id, status: 'revoked' });
    expect(revoked.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expectNoCredential(first, token);
    const page = await embedJson(token);
    expect(page.status).toBe(401);
    expect(page.body).toEqual({ error: 'Unauthorized', message: 'This embed session has been revoked' });
    const html = await call(runtime, `/embed?token=${token}`);
    expect(html.status).toBe(401);
    expect(html.text).toContain('data-code="session_revoked"');
    expect(html.text).toContain('Your access to this board was withdrawn.');
    const again = await revoke(owner, session.id);
    expect(again.status).toBe(200);
    expect((again.body.session as SessionBody).revokedAt).toBe(revoked.revokedAt);
    expect(((await retrieve(owner, session.id)).body.session as SessionBody).status).toBe('revoked');
  });

  it('needs no body, and ignores one', async () => {
    const { session } = await create(owner, { userId: 'u-body' });
    const result = await call(runtime, `/api/embed/sessions/${session.id}/revoke`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.apiKey}`, 'Content-Type': 'text/plain' },
      body: 'whatever',
    });
    expect(result.status).toBe(200);
  });

  it('never lets a page load after the revoke returned, even with loads racing the revoke', async () => {
    const { session, token } = await create(owner, { userId: 'u-race' });
    const racing = Array.from({ length: 10 }, () => embedJson(token));
    const revoked = revoke(owner, session.id);
    const during = await Promise.all(racing);
    expect((await revoked).status).toBe(200);
    for (const result of during) expect([200, 401]).toContain(result.status);
    const after = await Promise.all(Array.from({ length: 10 }, () => embedJson(token)));
    expect(after.map((r) => r.status)).toEqual(Array(10).fill(401));
  });
});

describe('POST /api/embed/sessions/revoke', () => {
  it('revokes every accessible session of a user that was not revoked yet, and counts them', async () => {
    const mine = [];
    for (let i = 0; i < 3; i++)
      mine.push(await create(owner, { userId: 'u-all', boardId: demo.privateBoardId }));
    mine.push(await create(owner, { userId: 'u-all', boardId: demo.publicBoardId }));
    const foreign = await create(otherTenant, { userId: 'u-all', boardId: demo.otherOrgBoardId });
    await revoke(owner, mine[0]?.session.id ?? '');

    const onBoard = await revokeAll(colleague, { userId: 'u-all', boardId: demo.privateBoardId });
    expect(onBoard.status).toBe(200);
    expect(onBoard.body).toEqual({ revoked: 2 });
    expect((await embedJson(mine[3]?.token ?? '')).status).toBe(200);

    expect((await revokeAll(owner, { userId: 'u-all' })).body).toEqual({ revoked: 1 });
    expect((await revokeAll(owner, { userId: 'u-all' })).body).toEqual({ revoked: 0 });
    for (const { token } of mine) expect((await embedJson(token)).status).toBe(401);
    expect((await embedJson(foreign.token)).status).toBe(200);
  });

  it.each([
    [{}, 'userId or boardId is required (or both)'],
    [{ userId: 'u', extra: 1 }, 'extra is not an allowed field'],
    [{ userId: 42 }, 'userId must be a string'],
    [{ userId: 'u', boardId: '' }, 'boardId must not be empty'],
    [[], 'Request body must be a JSON object'],
  ])('answers 400 for %j: %s', async (body, message) => {
    const result = await revokeAll(owner, body);
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ error: 'Bad Request', message });
  });
});

describe('the lifecycle routes as a whole', () => {
  it.each([
    ['DELETE', '/api/embed/sessions/00000000-0000-4000-8000-000000000000', 'GET'],
    ['GET', '/api/embed/sessions/00000000-0000-4000-8000-000000000000/revoke', 'POST'],
    ['PUT', '/api/embed/sessions/revoke', 'POST'],
    ['GET', '/api/embed/sessions/revoke', 'POST'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const result = await apiCall(runtime, owner.apiKey, method, path);
    expect(result.status).toBe(405);
    expect(result.headers.get('allow')).toBe(allow);
  });

  it.each([
    ['GET', '/api/embed/sessions/00000000-0000-4000-8000-000000000000'],
    ['GET', '/api/embed/sessions?userId=u'],
    ['POST', '/api/embed/sessions/00000000-0000-4000-8000-000000000000/revoke'],
    ['POST', '/api/embed/sessions/revoke'],
  ])('answers %s %s without an API key with 401', async (method, path) => {
    const result = await call(runtime, path, { method });
    expect(result.status).toBe(401);
    expect(result.body.error).toBe('Unauthorized');
  });
});
