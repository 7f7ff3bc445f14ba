import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime';
import { createSessionCall, startTestRuntime } from '../support/local-runtime';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await startTestRuntime();
});
afterAll(() => runtime?.close());

/** Runs the admin CLI as operators do, in its own process. */
async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'admin/cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, AWS_REGION: 'local' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('admin CLI', () => {
  it('creates a board, a membership and a key that together let a caller create a session', async () => {
    const board = await admin(
      'create-board',
      '--board',
      'cli-board',
      '--org',
      'org-cli',
      '--visibility',
      'PRIVATE',
      '--name',
      'CLI',
    );
    expect(board.code).toBe(0);
    expect(JSON.parse(board.stdout)).toEqual({
      boardId: 'cli-board',
      orgId: 'org-cli',
      visibility: 'PRIVATE',
      name: 'CLI',
    });

    const key = JSON.parse((await admin('create-api-key', '--user', 'cli-user', '--name', 'ci')).stdout);
    expect(key.apiKey).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect(key.userId).toBe('cli-user');
    const payload = { boardId: 'cli-board', userId: 'x', email: 'x@example.com' };
    const auth = { Authorization: `Bearer ${key.apiKey}` };

    expect((await createSessionCall(runtime, payload, auth)).status).toBe(403);
    expect((await admin('add-member', '--org', 'org-cli', '--user', 'cli-user')).code).toBe(0);
    expect((await createSessionCall(runtime, payload, auth)).status).toBe(201);
    expect(
      JSON.parse((await admin('remove-member', '--org', 'org-cli', '--user', 'cli-user')).stdout),
    ).toMatchObject({
      removed: true,
    });
    expect((await createSessionCall(runtime, payload, auth)).status).toBe(403);

    const revoked = JSON.parse((await admin('revoke-api-key', '--key-id', key.keyId)).stdout);
    expect(revoked).toMatchObject({ keyId: key.keyId, status: 'REVOKED' });
    expect((await createSessionCall(runtime, payload, auth)).status).toBe(401);
  });

  it('lists boards and keys without ever printing a key or its hash', async () => {
    const boards = JSON.parse((await admin('list-boards')).stdout);
    expect(boards.boards.map((b: { boardId: string }) => b.boardId)).toContain(runtime.demo?.publicBoardId);
    const listed = await admin('list-api-keys', '--user', runtime.demo?.userId as string);
    const keys = JSON.parse(listed.stdout).apiKeys as Record<string, unknown>[];
    expect(keys.length).toBeGreaterThan(0);
    expect(listed.stdout).not.toContain(runtime.demo?.apiKey);
    expect(keys.every((k) => !('keyHash' in k) && !('apiKey' in k))).toBe(true);
  });

  it('prints exactly one JSON document on stdout', async () => {
    const result = await admin('list-boards');
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
