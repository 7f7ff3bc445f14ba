import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv } from '#test/support/child-env';

const ROOT = join(import.meta.dirname, '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'npm-start-failures-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * `npm start` that must not start: its exit code and what it printed. The timeout is a guard against the
 * hang these tests exist to prevent, not a speed goal (those are the bench's).
 */
function failedStart(
  env: Record<string, string>,
): Promise<{ code: number | null; killed: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['start', '--silent'],
      {
        cwd: ROOT,
        env: childEnv({ PORT: '0', DYNAMODB_PORT: '0', BOARD_APP_PORT: '0', ...env }),
        timeout: 60_000,
      },
      (error, _stdout, stderr) => {
        const failure = error as (Error & { code?: number; killed?: boolean }) | null;
        resolve({ code: failure?.code ?? 0, killed: failure?.killed ?? false, stderr });
      },
    );
  });
}

/** The one line a failed start prints, without npm's own lines about the failed script. */
function reasonLine(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('Cannot start:'));
}

async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('npm start: a DATA_DIR it cannot use', () => {
  const file = join(scratch, 'a-file');
  writeFileSync(file, 'not a folder');
  const cases: Array<[string, string, RegExp]> = [
    ['a file', file, /it is a file, not a folder/],
    ['a path through a file', join(file, 'data'), /cannot be created \(a part of the path is a file/],
  ];
  if (process.platform === 'linux')
    cases.push(['a path that cannot be created', '/proc/no-such-folder/data', /cannot be created/]);

  it.each(cases)(
    'refuses %s in one line naming DATA_DIR, the path and the reason, and exits 1',
    async (_n, path, reason) => {
      const result = await failedStart({ DATA_DIR: path });
      expect(result.killed).toBe(false);
      expect(result.code).toBe(1);
      const lines = reasonLine(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`DATA_DIR ${path}`);
      expect(lines[0]).toMatch(reason);
      expect(result.stderr).not.toMatch(/LEVEL_| {4}at /);
    },
  );

  it.skipIf(process.getuid?.() === 0)('refuses a folder it cannot write (not testable as root)', async () => {
    const readOnly = join(scratch, 'read-only');
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o500);
    const result = await failedStart({ DATA_DIR: readOnly });
    expect(result.code).toBe(1);
    expect(reasonLine(result.stderr)[0]).toMatch(/DATA_DIR .*read-only.*not writable/);
  });
});

describe('npm start: a DYNAMODB_ENDPOINT nothing answers on', () => {
  it('says so in one line naming the variable and the URL, and exits 1', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const result = await failedStart({ DYNAMODB_ENDPOINT: endpoint });
    expect(result.killed).toBe(false);
    expect(result.code).toBe(1);
    const lines = reasonLine(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`DYNAMODB_ENDPOINT ${endpoint} cannot be reached (connection refused)`);
  });
});

describe('npm start: a BOARD_APP_PORT it cannot use', () => {
  it('says in one line that the port is in use, naming BOARD_APP_PORT, and exits 1', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    try {
      const { port } = taken.address() as { port: number };
      const result = await failedStart({ BOARD_APP_PORT: String(port) });
      expect(result.code).toBe(1);
      const lines = reasonLine(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`127.0.0.1:${port} is already in use`);
      expect(lines[0]).toContain('BOARD_APP_PORT');
    } finally {
      taken.close();
    }
  });

  it('refuses a BOARD_APP_PORT that is not a port, naming it', async () => {
    const result = await failedStart({ BOARD_APP_PORT: 'seventy' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Invalid configuration: .*BOARD_APP_PORT/);
  });
});
