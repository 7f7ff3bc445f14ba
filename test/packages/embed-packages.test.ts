import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_CORE, HOST_ERROR_CODES, HOST_SCRIPT_PATH } from '#lib/adapters/http/embed/host-script';
import { childEnv } from '#test/support/child-env';
import { assertPackagesBuilt } from '#test/support/packages';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The two npm packages as an integrator gets them: packed with `npm pack`, installed
 * from the tarballs into an empty application with no network (React and its types packed from this
 * repository's own install), then imported as a server-rendering framework imports them, type-checked, and
 * compared with what the service serves at /embed.js.
 */
const ROOT = join(import.meta.dirname, '../..');
const run = promisify(execFile);
const runtime = useTestRuntime();
let app: string;

/** What the application's server-side script printed: it runs with no `window`, as Node does. */
let ssr: string;

beforeAll(async () => {
  // Packed as npm install and npm test built them (npm pack's prepack would build them again, rewriting
  // files that other tests read meanwhile).
  assertPackagesBuilt();
  app = mkdtempSync(join(tmpdir(), 'embed-packages-app-'));
  const env = childEnv({ npm_config_cache: join(app, '.npm-cache') });
  await run(
    'npm',
    [
      'pack',
      '--ignore-scripts',
      '--workspace',
      'embed',
      '--workspace',
      'embed-react',
      '--pack-destination',
      app,
    ],
    {
      cwd: ROOT,
      env,
    },
  );
  const peers = ['react', 'react-dom', 'scheduler', '@types/react', 'csstype'].map(
    (name) => `./node_modules/${name}`,
  );
  await run('npm', ['pack', ...peers, '--pack-destination', app], { cwd: ROOT, env });
  const tarballs = readdirSync(app).filter((name) => name.endsWith('.tgz'));
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'host-app', private: true, type: 'module' }),
  );
  await run(
    'npm',
    ['install', ...tarballs.map((name) => `./${name}`), '--offline', '--no-audit', '--no-fund'],
    {
      cwd: app,
      env,
    },
  );
  writeFileSync(
    join(app, 'server.mjs'),
    `import { EMBED_ERROR_CODES, mount } from '@embed-session/embed';
import { EmbeddedBoard } from '@embed-session/react';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';

console.log('window after import:', typeof window, typeof document);
console.log('codes:', EMBED_ERROR_CODES.join(','));
console.log('rendered:', renderToString(createElement(EmbeddedBoard, { url: 'https://api.example.com/embed?token=t', className: 'board' })));
console.log('rendered with fetchEmbedUrl:', renderToString(createElement(EmbeddedBoard, { fetchEmbedUrl: async () => 'never asked' })));
try {
  mount('#board', { url: 'https://api.example.com/embed?token=t' });
} catch (error) {
  console.log('mount on the server:', error.message);
}
`,
  );
  ssr = (await run(process.execPath, ['server.mjs'], { cwd: app, env: childEnv(), timeout: 20_000 })).stdout;
}, 120_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('the npm packages, packed and installed into an application', () => {
  it('ship only their built files: ESM with type declarations', () => {
    const files = (name: string) =>
      readdirSync(join(app, 'node_modules/@embed-session', name, 'dist')).sort();
    expect(files('embed')).toEqual([
      'index.d.ts',
      'index.js',
      'runtime.d.ts',
      'runtime.js',
      'types.d.ts',
      'types.js',
    ]);
    expect(files('react')).toEqual(['index.d.ts', 'index.js']);
    const manifest = JSON.parse(
      readFileSync(join(app, 'node_modules/@embed-session/react/package.json'), 'utf8'),
    );
    expect(manifest.type).toBe('module');
    expect(manifest.peerDependencies).toEqual({ react: '>=18' });
    expect(manifest.dependencies).toEqual({ '@embed-session/embed': '^1.0.0' });
  });

  it('import on a server without touching window: the component renders its empty container, mount refuses', () => {
    expect(ssr).toContain('window after import: undefined undefined');
    expect(ssr).toContain(`codes: ${HOST_ERROR_CODES.join(',')}`);
    expect(ssr).toContain('rendered: <div class="board"></div>');
    expect(ssr).toContain('rendered with fetchEmbedUrl: <div></div>');
    expect(ssr).toContain('mount on the server: @embed-session/embed: mount needs a browser');
  });

  it('mark the React component as a client component for server-component frameworks', () => {
    const built = readFileSync(join(app, 'node_modules/@embed-session/react/dist/index.js'), 'utf8');
    expect(built.startsWith("'use client';\n")).toBe(true);
  });

  it('run the very bytes the service serves at /embed.js', async () => {
    const shipped = readFileSync(join(app, 'node_modules/@embed-session/embed/dist/runtime.js'), 'utf8');
    const core =
      /^export const createEmbedSession = (function createEmbedSession\(window\) \{[\s\S]*\n\});\n$/m.exec(
        shipped,
      )?.[1];
    expect(core, 'the runtime exports createEmbedSession').toBeDefined();
    const served = await (await fetch(`${runtime.baseUrl}${HOST_SCRIPT_PATH}`)).text();
    expect(served).toContain(`  window.EmbedSession = (${core})(window);\n`);
    expect(core).toBe(HOST_CORE);
  });

  it('give a TypeScript application their types: the options, the codes, the component’s props', async () => {
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          strict: true,
          noEmit: true,
          types: [],
        },
        files: ['host.ts'],
      }),
    );
    writeFileSync(
      join(app, 'host.ts'),
      `import { type EmbedErrorCode, type ErrorDetail, mount } from '@embed-session/embed';
import { EmbeddedBoard, type EmbeddedBoardProps } from '@embed-session/react';
import { createElement } from 'react';

const handle = mount('#board', {
  url: 'https://api.example.com/embed?token=t',
  fetchEmbedUrl: async () => 'https://api.example.com/embed?token=u',
  readyTimeout: 10_000,
  onReady: ({ sessionId, height }) => console.log(sessionId?.toUpperCase(), height),
  onError: (detail: ErrorDetail) => console.log(detail.code, detail.message),
});
const frame: HTMLIFrameElement | null = handle.iframe;
handle.destroy();
const code: EmbedErrorCode = 'ready_timeout';
mount(document.body, { fetchEmbedUrl: () => fetch('/embed-url').then((r) => r.text()) });
// @ts-expect-error a mount needs url or fetchEmbedUrl
mount('#board', { title: 'Board' });
// @ts-expect-error height is "auto" or pixels
mount('#board', { url: 'https://x', height: '300px' });
// @ts-expect-error no such code
const wrong: EmbedErrorCode = 'framing_refused';
const props: EmbeddedBoardProps = { url: 'https://x', className: 'board', onExpired: () => undefined };
createElement(EmbeddedBoard, props);
// @ts-expect-error the component needs url or fetchEmbedUrl too
const none: EmbeddedBoardProps = { className: 'board' };
console.log(frame, code, wrong, none);
`,
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: app,
      env: childEnv(),
    }).then(
      () => 'compiled',
      (error: { stdout: string }) => error.stdout,
    );
    expect(result).toBe('compiled');
  });
});
