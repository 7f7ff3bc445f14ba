import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '#test/support/child-env';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * client/README.md tells an integrator how to install the client in their own application and gives an
 * example to run: this test does exactly that, in an empty application outside the repository, from the
 * packed tarball, against the local runtime.
 */
const ROOT = join(import.meta.dirname, '../..');
const CLIENT_README = readFileSync(join(ROOT, 'client/README.md'), 'utf8');
const run = promisify(execFile);

/** The README's `example.mjs`: the one js block whose first line names that file. */
function example(): string {
  const blocks = [...CLIENT_README.matchAll(/^```js\n(\/\/ example\.mjs\n[\s\S]*?)^```$/gm)];
  if (blocks.length !== 1)
    throw new Error(`client/README.md must hold one example.mjs block, found ${blocks.length}`);
  return (blocks[0] as RegExpMatchArray)[1] as string;
}

const runtime = useTestRuntime();
let app: string;
beforeAll(async () => {
  app = mkdtempSync(join(tmpdir(), 'client-example-app-'));
});
afterAll(async () => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('client/README.md', () => {
  it('installs from the packed tarball into an empty application, where example.mjs runs as written', async () => {
    const env = childEnv({ npm_config_cache: join(app, '.npm-cache') });
    await run('npm', ['pack', '--workspace', 'client', '--pack-destination', app], { cwd: ROOT, env });
    const tarball = readdirSync(app).find((name) => name.endsWith('.tgz'));
    expect(tarball, 'npm pack wrote no tarball').toBeDefined();
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'example-app', private: true, type: 'module' }),
    );
    await run('npm', ['install', `./${tarball}`, '--offline', '--no-audit', '--no-fund'], { cwd: app, env });
    writeFileSync(join(app, 'example.mjs'), example());

    const { stdout } = await run(process.execPath, ['example.mjs'], {
      cwd: app,
      env: childEnv({ EMBED_API_URL: runtime.baseUrl, EMBED_API_KEY: runtime.demo?.apiKey }),
      timeout: 20_000,
    });

    const embedUrl = /<iframe> \(or EmbedSession\.mount\): (\S+)/.exec(stdout)?.[1];
    expect(embedUrl).toMatch(new RegExp(`^${runtime.baseUrl}/embed\\?token=[A-Za-z0-9_-]{32}$`));
    expect(stdout).toContain('status: active');
    expect(stdout).toMatch(/^active: [0-9a-f-]{36} until \d{4}-/m);
    expect(stdout).toMatch(/^revoked at \d{4}-\d\d-\d\dT/m);
    expect(stdout).toMatch(/^refused: 404 /m);
  });
});
