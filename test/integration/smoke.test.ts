import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '#admin/smoke';
import type { LocalRuntime } from '#local/runtime';
import { childEnv } from '#test/support/child-env';
import { useTestRuntime } from '#test/support/runtime-fixture';

/** `npm run smoke` against the local runtime, as an operator runs it against a deployed stage. */
const runtime = useTestRuntime();
const ROOT = join(import.meta.dirname, '../..');

async function runSmoke(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err };
}

const demo = () => runtime.demo as NonNullable<LocalRuntime['demo']>;
const args = (apiKey: string) => [
  '--base-url',
  runtime.baseUrl,
  '--api-key',
  apiKey,
  '--board',
  demo().publicBoardId,
];

describe('npm run smoke', () => {
  it('passes every step on a working stage, one line each, and exits 0', async () => {
    const { code, out } = await runSmoke(args(demo().apiKey));
    expect(out.map((line) => line.split(':')[0])).toEqual([
      'ok   create a session',
      'ok   open its link',
      'ok   read the discovery document',
      'ok   read the signing keys (JWKS)',
      'ok   revoke the session',
      'ok   see its link refused',
    ]);
    expect(code).toBe(0);
  });

  it('stops at the first failing step, says why, runs none after it and exits 1', async () => {
    const { code, out } = await runSmoke(args(`esk_${'x'.repeat(43)}`));
    expect(out[0]).toMatch(/^FAIL create a session: expected 201, got 401/);
    expect(
      out
        .slice(1)
        .every((line) => line.startsWith('FAIL') && line.endsWith('not run: an earlier step failed')),
    ).toBe(true);
    expect(code).toBe(1);
  });

  it('names a service that is not running, and refuses a command line without its options (exit 2)', async () => {
    const down = await runSmoke(['--base-url', 'http://127.0.0.1:9', '--api-key', 'k', '--board', 'b']);
    expect(down.out[0]).toMatch(/^FAIL create a session: cannot reach the service/);
    const usage = await runSmoke(['--base-url', runtime.baseUrl]);
    expect(usage.code).toBe(2);
    expect(usage.err.join('\n')).toContain('missing --api-key, --board');
  });

  it('runs as the npm script does, in a process of its own with only PATH and HOME', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'admin/smoke.ts', ...args(demo().apiKey)],
      { cwd: ROOT, env: childEnv() },
    );
    expect(stdout.trim().split('\n')).toHaveLength(6);
    expect(stdout).not.toContain('FAIL');
  });
});
