import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnv } from '#test/support/child-env';

/** The guard every test file runs under (vitest `setupFiles`): children see a newcomer's shell, not ours. */
describe('child processes started by tests', () => {
  it('get PATH, HOME and what the test sets, and nothing of the runner', () => {
    const printed = execFileSync(process.execPath, ['-e', 'console.log(JSON.stringify(process.env))'], {
      env: childEnv({ EXTRA: 'on purpose' }),
      encoding: 'utf8',
    });
    const seen = Object.keys(JSON.parse(printed)).filter((name) => name !== 'PWD' && name !== 'SHLVL');
    expect(seen.sort()).toEqual(['EXTRA', 'HOME', 'PATH']);
  });

  it('cannot be started without an explicit environment', () => {
    expect(() => execFileSync(process.execPath, ['--version'])).toThrow(/without an explicit env/);
    expect(() => spawn(process.execPath, ['--version'], { stdio: 'ignore' })).toThrow(
      /without an explicit env/,
    );
  });

  it("cannot be given the runner's own environment, promisified or not", async () => {
    expect(() => execFileSync(process.execPath, ['--version'], { env: process.env })).toThrow(
      /the test runner's environment/,
    );
    await expect(
      promisify(execFile)(process.execPath, ['--version'], { env: { ...process.env, EXTRA: '1' } }),
    ).rejects.toThrow(/the test runner's environment/);
  });

  it('keeps execFile promisified with its stdout and stderr', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--version'], { env: childEnv() });
    expect(stdout.trim()).toBe(process.version);
  });
});
