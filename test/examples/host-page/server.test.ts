import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnv } from '#test/support/child-env';
import { listenOnFreePort } from '#test/support/listen';
import { DEMO_USER, hostPageEnv } from '../../../examples/host-page/server';

/**
 * How the example host page is started: `npm run example:host-page` with the API key in EMBED_API_KEY, in
 * a shell that holds nothing else; without a usable key it says what to do and starts nothing.
 */
const ROOT = join(import.meta.dirname, '../../..');
const KEY = 'esk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';

describe('hostPageEnv', () => {
  it("reads the key, and defaults to the local service, the quickstart's board and port 3002", () => {
    expect(hostPageEnv({ EMBED_API_KEY: KEY })).toEqual({
      config: { apiBaseUrl: 'http://127.0.0.1:3000', apiKey: KEY, boardId: 'roadmap', user: DEMO_USER },
      port: 3002,
    });
  });

  it("takes the service's base URL (a stage's, with its path), the board and the port", () => {
    const read = hostPageEnv({
      EMBED_API_KEY: KEY,
      EMBED_API_URL: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/',
      HOST_PAGE_BOARD: 'b1',
      HOST_PAGE_PORT: '0',
    });
    expect(read).toEqual({
      config: expect.objectContaining({
        apiBaseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod',
        boardId: 'b1',
      }),
      port: 0,
    });
  });

  it.each([
    ['unset', {}],
    ['empty', { EMBED_API_KEY: '' }],
    ['blank', { EMBED_API_KEY: '  ' }],
  ])('refuses to start with the key %s, saying how to give it', (_what, env) => {
    const read = hostPageEnv(env);
    expect(read).toEqual({ problems: [expect.stringContaining('EMBED_API_KEY is not set')] });
    const [problem] = (read as { problems: string[] }).problems;
    expect(problem).toContain('EMBED_API_KEY=esk_… npm run example:host-page');
    expect(problem).toContain('create-api-key');
  });

  it('refuses a value that is no API key, such as the "null" jq prints for a missing field', () => {
    expect(hostPageEnv({ EMBED_API_KEY: 'null' })).toEqual({
      problems: ['EMBED_API_KEY does not look like an API key: keys start with esk_.'],
    });
  });

  it.each([
    'javascript:alert(1)',
    'ftp://127.0.0.1:3000',
    'http://127.0.0.1:3000/?x=1',
    'http://127.0.0.1:3000/#x',
    'http://user:secret@127.0.0.1:3000',
    "http://127.0.0.1:3000/a;script-src 'unsafe-inline'",
    'not a url',
  ])(
    'refuses EMBED_API_URL %s: it goes into the page and its CSP, so it is an http(s) origin and a plain path',
    (url) => {
      expect(hostPageEnv({ EMBED_API_KEY: KEY, EMBED_API_URL: url })).toEqual({
        problems: [expect.stringMatching(/^EMBED_API_URL must be the service's http\(s\) base URL/)],
      });
    },
  );

  it.each(['-1', '65536', '30x', '3.5'])('refuses HOST_PAGE_PORT %s', (port) => {
    expect(hostPageEnv({ EMBED_API_KEY: KEY, HOST_PAGE_PORT: port })).toEqual({
      problems: [`HOST_PAGE_PORT must be a port (0-65535), not "${port}".`],
    });
  });
});

/** Runs the script in a shell holding only PATH and HOME plus `env`; resolves with how it failed. */
async function failedRun(env: Record<string, string>) {
  const run = promisify(execFile)('npm', ['run', '--silent', 'example:host-page'], {
    cwd: ROOT,
    env: childEnv(env),
  });
  return (await run.then(
    () => undefined,
    (error: unknown) => error,
  )) as { code: number; stdout: string; stderr: string } | undefined;
}

describe('npm run example:host-page', () => {
  it('exits 1 in a shell holding only PATH and HOME, saying that EMBED_API_KEY is missing and printing nothing else', async () => {
    const failure = await failedRun({ HOST_PAGE_PORT: '0' });
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr).toMatch(/^EMBED_API_KEY is not set: the host page needs your API key/);
  });

  it('exits 1 naming HOST_PAGE_PORT when its port is taken', async () => {
    const taken = await listenOnFreePort(createServer());
    try {
      const failure = await failedRun({ EMBED_API_KEY: KEY, HOST_PAGE_PORT: String(taken.port) });
      expect(failure?.code).toBe(1);
      expect(failure?.stderr.trim()).toBe(
        `Port ${taken.port} is already in use. Set HOST_PAGE_PORT to a free port.`,
      );
    } finally {
      await taken.close();
    }
  });
});
