import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '#admin/cli';
import { childEnv } from '#test/support/child-env';
import { createSessionAs } from '#test/support/create-session-as';
import { adminEnv, apiCall, call, keyOwner } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The admin CLI's provisioning and key lifecycle commands against the local runtime, in process through
 * `main()` (one subprocess run checks the import as operators start it): bulk import, members, deleting a
 * board, key expiry and `--end-sessions`.
 */
const runtime = useTestRuntime();
const ROOT = join(import.meta.dirname, '../..');

/** Runs one command through the CLI's `main`, as the shell would; its exit code and printed JSON. */
async function admin(
  ...argv: string[]
): Promise<{ code: number; json: Record<string, unknown>; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, adminEnv(runtime), {
    out: (text) => (out += text),
    err: (text) => (err += text),
  });
  return { code, json: out ? (JSON.parse(out) as Record<string, unknown>) : {}, err };
}

const embed = (token: string) =>
  call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });

function jsonLines(lines: readonly unknown[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'import-'));
  const path = join(dir, 'provision.jsonl');
  writeFileSync(
    path,
    lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n'),
  );
  return path;
}

describe('admin import', () => {
  it('imports boards and memberships, reports each bad line by number, and converges when run again', async () => {
    const lines = [
      ...Array.from({ length: 200 }, (_, i) => ({
        type: 'board',
        orgId: 'org_bulk',
        boardId: `bulk_${i}`,
        visibility: 'PUBLIC',
        name: `Board ${i}`,
      })),
      ...Array.from({ length: 100 }, (_, i) => ({
        type: 'membership',
        orgId: 'org_bulk',
        userId: `member_${i}`,
      })),
      'not json',
      { type: 'board', orgId: 'org_bulk', boardId: 'bulk_bad', visibility: 'SECRET' },
      { type: 'team', orgId: 'org_bulk' },
      // Another organization's board: refused, the rest goes on.
      { type: 'board', orgId: 'org_else', boardId: 'bulk_0', visibility: 'PUBLIC' },
    ];
    const file = jsonLines(lines);
    const first = await admin('import', file);
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ lines: 304, created: 300, updated: 0, unchanged: 0, failed: 4 });
    expect((first.json.errors as { line: number }[]).map((e) => e.line)).toEqual([301, 302, 303, 304]);

    const again = await admin('import', file);
    expect(again.json).toMatchObject({ created: 0, updated: 0, unchanged: 300, failed: 4 });
    const members = await admin('list-members', '--org', 'org_bulk');
    expect((members.json.members as string[]).length).toBe(100);
    const boards = await admin('list-boards', '--org', 'org_bulk');
    expect((boards.json.boards as unknown[]).length).toBe(200);
    expect(boards.json.boards).toContainEqual(
      expect.objectContaining({ boardId: 'bulk_7', updatedBy: expect.stringMatching(/^cli:/) }),
    );
  });

  it('resumes from a line, leaving the lines before it alone', async () => {
    const file = jsonLines([
      { type: 'board', orgId: 'org_resume', boardId: 'resume_1', visibility: 'PUBLIC' },
      { type: 'board', orgId: 'org_resume', boardId: 'resume_2', visibility: 'PUBLIC' },
    ]);
    expect((await admin('import', file, '--from-line', '2')).json).toMatchObject({ lines: 1, created: 1 });
    expect(
      ((await admin('list-boards', '--org', 'org_resume')).json.boards as { boardId: string }[]).map(
        (b) => b.boardId,
      ),
    ).toEqual(['resume_2']);
  });

  it('runs as operators start it, in its own process', async () => {
    const file = jsonLines([{ type: 'membership', orgId: 'org_sub', userId: 'sub_1' }]);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'admin/cli.ts', 'import', file],
      {
        cwd: ROOT,
        env: childEnv({ DYNAMODB_ENDPOINT: runtime.dynamoEndpoint }),
      },
    );
    expect(JSON.parse(stdout)).toMatchObject({ lines: 1, created: 1, failed: 0 });
  });
});

describe('key lifecycle in the admin CLI', () => {
  it('revoke-api-key --end-sessions refuses the key’s links from the next load and leaves other keys’ links open', async () => {
    const leaked = await keyOwner(runtime, 'cli-leak');
    const other = await keyOwner(runtime, 'cli-leak');
    const fromLeaked = await createSessionAs(runtime, leaked);
    const fromOther = await createSessionAs(runtime, other);
    const revoked = await admin('revoke-api-key', '--key-id', leaked.keyId, '--end-sessions');
    expect(revoked.json).toMatchObject({
      status: 'REVOKED',
      revokedBy: expect.stringMatching(/^cli:/),
      sessionsEndedAt: expect.any(String),
    });
    expect((await embed(fromLeaked.token)).status).toBe(401);
    expect((await embed(fromOther.token)).status).toBe(200);
  });

  it('create-api-key --expires-in-days gives the key its expiry, shown by list-api-keys with its last use', async () => {
    const created = await admin('create-api-key', '--user', 'cli-expiring', '--expires-in-days', '7');
    expect(Date.parse(String(created.json.expiresAt)) - Date.now()).toBeGreaterThan(6 * 86_400_000);
    await apiCall(runtime, String(created.json.apiKey), 'GET', '/api/embed/sessions?userId=x');
    const listed = await admin('list-api-keys', '--user', 'cli-expiring');
    expect(listed.json.apiKeys).toEqual([
      expect.objectContaining({ expiresAt: created.json.expiresAt, lastUsedAt: expect.any(String) }),
    ]);
    expect((await admin('create-api-key', '--user', 'cli-expiring', '--expires-in-days', '0')).code).toBe(1);
  });

  it('remove-member --end-sessions ends the member’s links on the organization’s boards', async () => {
    const member = await keyOwner(runtime, 'cli-leaver', ['org_demo']);
    const { token } = await createSessionAs(runtime, member, { boardId: runtime.demo?.privateBoardId });
    const removed = await admin(
      'remove-member',
      '--org',
      'org_demo',
      '--user',
      'cli-leaver',
      '--end-sessions',
    );
    expect(removed.json).toMatchObject({ removed: true, sessionsEndedAt: expect.any(String) });
    expect((await embed(token)).status).toBe(401);
  });

  it('delete-board ends the board’s sessions and deletes it', async () => {
    await admin('create-board', '--board', 'cli_doomed', '--org', 'org_demo', '--visibility', 'PUBLIC');
    const { token } = await createSessionAs(
      runtime,
      { apiKey: String(runtime.demo?.apiKey) },
      { boardId: 'cli_doomed' },
    );
    expect((await admin('delete-board', '--org', 'org_demo', '--board', 'cli_doomed')).json).toMatchObject({
      deleted: true,
    });
    expect((await embed(token)).status).toBe(401);
  });
});
