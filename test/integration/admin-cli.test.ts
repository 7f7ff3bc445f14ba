import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { main } from '#admin/cli';
import { childEnv } from '#test/support/child-env';
import { createSessionCall } from '#test/support/local-runtime';
import { WITHIN_THE_BOARD_CACHE } from '#test/support/read-cache';
import { useTestRuntime } from '#test/support/runtime-fixture';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

const runtime = useTestRuntime();

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the admin CLI as operators do, in its own process, with exactly the given environment. */
async function cli(args: string[], env: Record<string, string>, timeout = 0): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'admin/cli.ts', ...args], {
      cwd: ROOT,
      env: childEnv(env),
      timeout,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number | null; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * Runs the admin CLI in this process (`main` of admin/cli.ts) with exactly the environment given: a
 * process per command costs a second each. One test below runs it as operators do, as a process of its
 * own.
 */
async function adminWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, env, { out: (text) => out.push(text), err: (text) => err.push(text) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** Runs the admin CLI in this process against the local runtime. */
const admin = (...args: string[]) => adminWith({ DYNAMODB_ENDPOINT: runtime.dynamoEndpoint }, ...args);

/** Runs the admin CLI against the local runtime with the words of a command line (none holds a space). */
const adminLine = (line: string) => admin(...line.split(' '));

describe('admin CLI', () => {
  it('creates a board, a membership and a key that together let a caller create a session', async () => {
    const board = await adminLine(
      'create-board --board cli-board --org org-cli --visibility PRIVATE --name CLI',
    );
    expect(board.code).toBe(0);
    expect(JSON.parse(board.stdout)).toEqual({
      boardId: 'cli-board',
      orgId: 'org-cli',
      visibility: 'PRIVATE',
      name: 'CLI',
      updatedBy: expect.stringMatching(/^cli:./),
      updatedAt: expect.any(String),
    });

    const key = JSON.parse((await admin('create-api-key', '--user', 'cli-user', '--name', 'ci')).stdout);
    expect(key.apiKey).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect(key.userId).toBe('cli-user');
    const payload = { boardId: 'cli-board', userId: 'x', email: 'x@example.com' };
    const auth = { Authorization: `Bearer ${key.apiKey}` };

    expect((await createSessionCall(runtime, payload, auth)).status).toBe(403);
    expect((await admin('add-member', '--org', 'org-cli', '--user', 'cli-user')).code).toBe(0);
    // The create function keeps a membership answer for a second: the change counts within it.
    const createStatus = async () => (await createSessionCall(runtime, payload, auth)).status;
    await expect.poll(createStatus, WITHIN_THE_BOARD_CACHE).toBe(201);
    expect(
      JSON.parse((await admin('remove-member', '--org', 'org-cli', '--user', 'cli-user')).stdout),
    ).toMatchObject({
      removed: true,
    });
    await expect.poll(createStatus, WITHIN_THE_BOARD_CACHE).toBe(403);

    const revoked = JSON.parse((await admin('revoke-api-key', '--key-id', key.keyId)).stdout);
    expect(revoked).toMatchObject({ keyId: key.keyId, status: 'REVOKED' });
    expect((await createSessionCall(runtime, payload, auth)).status).toBe(401);
  });

  it('lists boards and keys without ever printing a key or its hash', async () => {
    const boards = JSON.parse((await admin('list-boards')).stdout);
    expect(boards.boards.map((b: { boardId: string }) => b.boardId)).toContain(runtime.demo?.publicBoardId);
    const listed = await admin('list-api-keys', '--user', runtime.demo?.userId as string);
    const keys = JSON.parse(listed.stdout).apiKeys as Record<string, unknown>[];
    expect(keys.map((k) => k.keyId)).toContain(runtime.demo?.keyId);
    expect(keys.every((k) => k.userId === runtime.demo?.userId)).toBe(true);
    expect(listed.stdout).not.toContain(runtime.demo?.apiKey);
    expect(keys.every((k) => !('keyHash' in k) && !('apiKey' in k))).toBe(true);
  });

  it("lists only the given user's keys with --user, never another user's", async () => {
    const create = async (user: string) =>
      JSON.parse((await admin('create-api-key', '--user', user)).stdout) as { apiKey: string; keyId: string };
    const alice = [await create('list-alice'), await create('list-alice')];
    const bob = await create('list-bob');
    type Listed = { keyId: string; userId: string };
    const list = async (...args: string[]) => {
      const result = await admin('list-api-keys', ...args);
      expect(result.code).toBe(0);
      return { stdout: result.stdout, keys: JSON.parse(result.stdout).apiKeys as Listed[] };
    };

    // Without --user every key is listed, Bob's included: the filter below is what hides it.
    const all = await list();
    expect(all.keys.map((k) => k.keyId)).toEqual(expect.arrayContaining([...alice, bob].map((k) => k.keyId)));

    const ofAlice = await list('--user', 'list-alice');
    expect(ofAlice.keys.map((k) => k.keyId).sort()).toEqual(alice.map((k) => k.keyId).sort());
    expect(ofAlice.keys.every((k) => k.userId === 'list-alice')).toBe(true);
    expect(ofAlice.stdout).not.toContain(bob.keyId);
    expect(ofAlice.stdout).not.toContain('list-bob');
    expect(ofAlice.stdout).not.toContain(runtime.demo?.userId);

    const ofBob = await list('--user', 'list-bob');
    expect(ofBob.keys).toEqual([expect.objectContaining({ keyId: bob.keyId, userId: 'list-bob' })]);
    for (const listed of [all, ofAlice, ofBob]) {
      for (const { apiKey } of [...alice, bob]) expect(listed.stdout).not.toContain(apiKey);
    }
  });

  /**
   * AWS as the CLI sees it in production, but with no credentials: should the CLI wrongly try a call,
   * it goes to a closed local port, never to AWS.
   */
  const AWS_GOING_NOWHERE = {
    AWS_REGION: 'eu-west-1',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: join(ROOT, 'no-such-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(ROOT, 'no-such-aws-credentials'),
    AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
  };

  /**
   * The CLI in this process against AWS going nowhere. The SDK reads its settings from the process's
   * environment, not from the one `main` is given, so they are set there for the call, and any
   * credentials of the process taken away.
   */
  async function adminAgainstNowhere(env: Record<string, string>, ...args: string[]) {
    for (const [name, value] of Object.entries(AWS_GOING_NOWHERE)) vi.stubEnv(name, value);
    for (const name of ['AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'])
      vi.stubEnv(name, undefined);
    try {
      return await adminWith({ ...AWS_GOING_NOWHERE, ...env }, ...args);
    } finally {
      vi.unstubAllEnvs();
    }
  }

  it('refuses to guess table names against AWS: exits 2 naming the missing variable, before any call', async () => {
    // No DYNAMODB_ENDPOINT and no table names.
    for (const [args, variable] of [
      [['list-boards'], 'BOARDS_TABLE'],
      [['list-api-keys'], 'API_KEYS_TABLE'],
      [['add-member', '--org', 'o', '--user', 'u'], 'MEMBERSHIPS_TABLE'],
    ] as const) {
      const result = await adminAgainstNowhere({}, ...args);
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n')[0]).toBe(
        `error: ${variable} is required against AWS (the table name from the stack outputs); ` +
          'the local defaults apply only with DYNAMODB_ENDPOINT',
      );
    }
  });

  it('refuses API key commands against AWS without USAGE_PLAN_ID: exits 2 before any call', async () => {
    const result = await adminAgainstNowhere(
      { API_KEYS_TABLE: 'keys-prod' },
      'create-api-key',
      '--user',
      'u',
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toMatch(/^error: USAGE_PLAN_ID is required against AWS/);
  });

  it('exits 2 as a process of its own when it refuses, the error on stderr and nothing on stdout', async () => {
    const result = await cli(['list-boards'], AWS_GOING_NOWHERE, 20_000);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toMatch(/^error: BOARDS_TABLE is required against AWS/);
  });

  it('prints exactly one JSON document on stdout, as a process of its own', async () => {
    const result = await cli(['list-boards'], { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint });
    expect(result.code).toBe(0);
    expect(() => JSON.parse(result.stdout)).not.toThrow();
    expect(result.stderr).toBe('');
  });

  it('exits non-zero with the error on stderr and nothing on stdout for bad input', async () => {
    for (const args of [
      ['no-such-command'],
      ['create-board', '--board', 'b'],
      ['create-board', '--board', 'b', '--org', 'o', '--visibility', 'SECRET'],
      ['revoke-api-key', '--key-id', 'key_missing'],
    ]) {
      const result = await admin(...args);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^error: /);
    }
  });
});

describe('admin CLI: create-board on an existing board', () => {
  it('keeps every option left out: name, visibility, organization and origins', async () => {
    const first = await adminLine(
      'create-board --board cli-kept --org org-cli --visibility PRIVATE --name Roadmap --embed-origins https://app.acme.com',
    );
    expect(first.code).toBe(0);
    const renamed = await admin('create-board', '--board', 'cli-kept', '--visibility', 'PUBLIC');
    expect(renamed.code).toBe(0);
    expect(JSON.parse(renamed.stdout)).toEqual({
      boardId: 'cli-kept',
      orgId: 'org-cli',
      visibility: 'PUBLIC',
      name: 'Roadmap',
      embedOrigins: ['https://app.acme.com'],
      updatedBy: expect.stringMatching(/^cli:./),
      updatedAt: expect.any(String),
    });
    const cleared = await admin('create-board', '--board', 'cli-kept', '--name', '');
    expect(JSON.parse(cleared.stdout)).toMatchObject({ name: null, visibility: 'PUBLIC', orgId: 'org-cli' });
  });

  it('still needs --org and --visibility for a new board, and its usage says what is kept', async () => {
    const result = await admin('create-board', '--board', 'cli-new-without-org', '--visibility', 'PUBLIC');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('a new board needs --org and --visibility');
    const usage = await admin('help');
    expect(usage.stdout).toContain('on an existing board every option left out keeps its value');
  });
});

describe('admin CLI: a DynamoDB that is not running', () => {
  it('says it cannot reach DynamoDB at that URL, rather than "temporarily unavailable"', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise((resolve) => server.close(resolve));
    const result = await adminWith({ DYNAMODB_ENDPOINT: endpoint }, 'list-boards');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `cannot reach DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT): connection refused`,
    );
    expect(result.stderr).not.toMatch(/temporarily unavailable/);
  });
});

describe('admin CLI: a board’s embed origins, own application and logout URL', () => {
  /** A board of its own for each setting, so that the rows do not meet. */
  const board = (option: string) => [
    'create-board',
    '--board',
    `cli${option}`,
    '--org',
    'org-cli',
    '--visibility',
    'PUBLIC',
  ];
  const origins = ['https://app.acme.com', 'https://*.acme.com'];
  const appUrl = 'http://127.0.0.1:3001/';
  const logoutUrl = 'http://127.0.0.1:3001/backchannel-logout';
  /** As an operator allowing receivers on this machine runs it: WEBHOOK_ALLOW_LOOPBACK=1. */
  const adminAllowingLoopback = (...args: string[]) =>
    adminWith({ DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, WEBHOOK_ALLOW_LOOPBACK: '1' }, ...args);

  it.each([
    ['the origins allowed to frame it', '--embed-origins', origins.join(','), 'embedOrigins', origins],
    ['its app URL, loopback http accepted against the local runtime', '--app-url', appUrl, 'appUrl', appUrl],
    [
      'its logout URL, on loopback where WEBHOOK_ALLOW_LOOPBACK=1 allows it',
      '--logout-url',
      logoutUrl,
      'logoutUrl',
      logoutUrl,
    ],
  ])('sets, keeps through a rename and clears %s', async (_what, option, value, property, stored) => {
    const set = await adminAllowingLoopback(...board(option), option, value);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)[property]).toEqual(stored);

    const renamed = await admin(...board(option), '--name', 'Renamed');
    expect(JSON.parse(renamed.stdout)).toMatchObject({ name: 'Renamed', [property]: stored });

    const cleared = await admin(...board(option), option, '');
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.stdout)).not.toHaveProperty(property);
  });

  it.each([
    [
      'an entry that is no origin, naming it',
      '--embed-origins',
      'https://ok.acme.com,https://acme.com/path',
      '"https://acme.com/path"',
    ],
    ['an app URL on plain http off loopback', '--app-url', 'http://board.acme.com/', 'https'],
    [
      'a logout URL on plain http off loopback',
      '--logout-url',
      'http://board.acme.com/logout',
      'a logout URL must use https',
    ],
    [
      'a logout URL inside the network the service runs in',
      '--logout-url',
      'https://169.254.169.254/latest/meta-data/',
      'a logout URL must point to the public internet: 169.254.169.254 is a link-local address',
    ],
    [
      'a loopback logout URL unless WEBHOOK_ALLOW_LOOPBACK=1 allows it, saying so',
      '--logout-url',
      logoutUrl,
      '127.0.0.1 is a loopback address (WEBHOOK_ALLOW_LOOPBACK=1 allows a receiver on this machine, on the local runtime only)',
    ],
  ])('refuses %s, and changes nothing', async (_what, option, value, message) => {
    const id = `cli${option}`;
    const listed = async () => {
      const boards = JSON.parse((await admin('list-boards')).stdout).boards as { boardId: string }[];
      return boards.find((b) => b.boardId === id);
    };
    // The board exists before the refused change, under a name the change would keep.
    expect((await admin(...board(option), '--name', 'Before the refusal')).code).toBe(0);
    const before = await listed();
    expect(before).toMatchObject({ boardId: id, name: 'Before the refusal' });

    const result = await admin(...board(option), '--name', 'Refused', option, value);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    expect(await listed()).toEqual(before);
  });
});

describe('admin CLI: sessions', () => {
  async function created(userId: string, boardId = runtime.demo?.publicBoardId) {
    const result = await createSessionCall(runtime, { boardId, userId, email: 'ops@example.com' });
    return {
      id: String((result.body.session as { id: string }).id),
      token: String(result.body.sessionToken),
    };
  }

  it('shows a session with who created it, and never its token or hash', async () => {
    const { id, token } = await created('cli-get');
    const result = await admin('get-session', '--id', id);
    expect(result.code).toBe(0);
    const session = JSON.parse(result.stdout);
    expect(session).toMatchObject({
      id,
      userId: 'cli-get',
      status: 'active',
      revokedAt: null,
      orgId: 'org_demo',
      createdByUserId: runtime.demo?.userId,
      createdByKeyId: runtime.demo?.keyId,
    });
    expect(result.stdout).not.toContain(token);
    expect(result.stdout).not.toContain('tokenHash');
    expect(result.stdout).not.toMatch(/[0-9a-f]{64}/);
  });

  it('lists a user’s or a board’s sessions, newest first, filtered by status and limited', async () => {
    const first = await created('cli-list');
    const second = await created('cli-list');
    const byUser = JSON.parse((await admin('list-sessions', '--user', 'cli-list')).stdout);
    expect(byUser.sessions.map((s: { id: string }) => s.id)).toEqual([second.id, first.id]);
    const limited = JSON.parse((await admin('list-sessions', '--user', 'cli-list', '--limit', '1')).stdout);
    expect(limited.sessions).toHaveLength(1);
    const byBoard = JSON.parse(
      (await admin('list-sessions', '--board', String(runtime.demo?.publicBoardId), '--status', 'active'))
        .stdout,
    );
    expect(byBoard.sessions.map((s: { id: string }) => s.id)).toEqual(
      expect.arrayContaining([first.id, second.id]),
    );
  });

  it('revokes one session and then all of a user’s, as the operator, and the links stop working', async () => {
    const one = await created('cli-revoke');
    const two = await created('cli-revoke');
    const revoked = JSON.parse((await admin('revoke-session', '--id', one.id)).stdout);
    expect(revoked).toMatchObject({
      id: one.id,
      status: 'revoked',
      // The operator by name: the CLI and the user running it.
      revokedByUserId: expect.stringMatching(/^cli:./),
      revokedByKeyId: null,
    });
    const before = new Date().toISOString();
    expect(
      JSON.parse((await admin('revoke-all-sessions', '--user', 'cli-revoke', '--before', before)).stdout),
    ).toEqual({ revoked: 1, cutoff: before, scope: 'user' });
    expect(
      JSON.parse((await admin('revoke-all-sessions', '--user', 'cli-revoke', '--before', before)).stdout),
    ).toMatchObject({ revoked: 0 });
    expect(JSON.parse((await admin('get-session', '--id', two.id)).stdout)).toMatchObject({
      status: 'revoked',
      revokedAt: before,
      revokedByUserId: expect.stringMatching(/^cli:./),
    });
    for (const { token } of [one, two]) {
      const page = await fetch(`${runtime.baseUrl}/embed?token=${token}`);
      expect(page.status).toBe(401);
    }
  });

  it('filters a listing by status, and revokes the sessions on the named board only', async () => {
    const privateBoard = String(runtime.demo?.privateBoardId);
    const onPublic = await created('cli-scoped');
    const onPrivate = await created('cli-scoped', privateBoard);
    await admin('revoke-session', '--id', onPublic.id);
    const active = JSON.parse(
      (await admin('list-sessions', '--user', 'cli-scoped', '--status', 'active')).stdout,
    );
    expect(active.sessions.map((s: { id: string }) => s.id)).toEqual([onPrivate.id]);
    const revoked = JSON.parse(
      (await admin('list-sessions', '--user', 'cli-scoped', '--status', 'revoked')).stdout,
    );
    expect(revoked.sessions.map((s: { id: string }) => s.id)).toEqual([onPublic.id]);
    const other = await created('cli-someone-else', privateBoard);
    const before = new Date().toISOString();
    const result = JSON.parse(
      (await admin('revoke-all-sessions', '--board', privateBoard, '--before', before)).stdout,
    );
    expect(result.revoked).toBeGreaterThanOrEqual(2);
    expect(JSON.parse((await admin('get-session', '--id', other.id)).stdout).status).toBe('revoked');
    expect(JSON.parse((await admin('get-session', '--id', onPrivate.id)).stdout).status).toBe('revoked');
    const publicOne = await created('cli-scoped');
    expect(JSON.parse((await admin('get-session', '--id', publicOne.id)).stdout).status).toBe('active');
  });

  it.each([
    [['get-session', '--id', '00000000-0000-4000-8000-000000000000'], 1, 'No session has id'],
    [['list-sessions'], 2, 'list-sessions needs --user or --board'],
    [
      ['list-sessions', '--user', 'u', '--status', 'gone'],
      2,
      '--status must be one of active, expired, revoked',
    ],
    [['list-sessions', '--user', 'u', '--limit', '0'], 2, '--limit must be a positive integer'],
    [['revoke-all-sessions', '--board', 'b'], 2, 'revoke-all-sessions needs --before'],
    [['revoke-all-sessions', '--before', 'soon'], 1, '--before must be an ISO 8601 time'],
  ])('refuses %j with exit code %i', async (args, code, message) => {
    const result = await admin(...args);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
  });

  it('refuses to move a board to another organization', async () => {
    const result = await admin(
      'create-board',
      '--board',
      String(runtime.demo?.publicBoardId),
      '--org',
      'org_elsewhere',
      '--visibility',
      'PUBLIC',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('belongs to another organization; a board never changes organization');
  });
});
