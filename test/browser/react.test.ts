import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { describeInChromium, useChromium, useCustomerSite } from '#test/support/browser';
import { createSessionAs, demoKey } from '#test/support/create-session-as';
import { assertPackagesBuilt } from '#test/support/packages';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * `<EmbeddedBoard>` in a React host page, as an integrator builds one: the page's script bundled by esbuild
 * from the workspace packages (React in development mode, where StrictMode mounts, unmounts and mounts
 * again), its markup rendered on the server first and hydrated in Chromium, on another site than the
 * service. The board gets its first link and its renewal from the host's fetchEmbedUrl.
 */
const ROOT = join(import.meta.dirname, '../..');
const runtime = useTestRuntime();
const browser = useChromium();

/** The host's page script: the component under StrictMode, hydrating the server's markup. */
const HOST_APP = `
import { createElement as h, StrictMode, useState } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { EmbeddedBoard } from '@embed-session/react';

window.heard = [];
window.asked = 0;
const fetchEmbedUrl = async () => {
  window.asked++;
  const answer = await fetch('/embed-url', { method: 'POST' });
  if (!answer.ok) throw new Error('the backend answered ' + answer.status);
  return (await answer.json()).embedUrl;
};
function App() {
  const [shown, setShown] = useState(true);
  window.unmountBoard = () => setShown(false);
  if (!shown) return null;
  return h(EmbeddedBoard, {
    className: 'board',
    title: 'Roadmap',
    fetchEmbedUrl,
    onReady: (detail) => heard.push(['ready', detail.sessionId]),
    onExpired: () => heard.push(['expired']),
    onRevoked: () => heard.push(['revoked']),
    onError: (detail) => heard.push(['error', detail.code]),
  });
}
hydrateRoot(document.getElementById('root'), h(StrictMode, null, h(App)));
`;

let bundle = '';
/** What the host's server rendered into `#root`. */
let serverMarkup = '';

/** How long the first session lasts: long enough that its real end never comes while the test runs. */
const FIRST_SESSION_SECONDS = 60;

/** The customer's backend: sessions of the next of `lifetimes` seconds; the page's script. */
const backend = { asked: 0, lifetimes: [FIRST_SESSION_SECONDS, 3600], urls: [] as string[] };
function route(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.url === '/favicon.ico') {
    response.writeHead(204).end();
    return true;
  }
  if (request.url === '/app.js') {
    response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
    return true;
  }
  if (request.method !== 'POST' || request.url !== '/embed-url') return false;
  backend.asked++;
  const seconds = (backend.lifetimes.length > 1 ? backend.lifetimes.shift() : backend.lifetimes[0]) as number;
  createSessionAs(runtime, demoKey(runtime), { expiresInSeconds: seconds }).then(
    ({ embedUrl }) => {
      backend.urls.push(embedUrl);
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ embedUrl }));
    },
    () => response.writeHead(502).end(),
  );
  return true;
}
const site = useCustomerSite({ route });

beforeAll(async () => {
  // The packages as the page imports them, built from this checkout's sources by npm install or npm test.
  assertPackagesBuilt();
  const built = await build({
    stdin: { contents: HOST_APP, resolveDir: ROOT, sourcefile: 'host-app.js', loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"development"' },
  });
  bundle = built.outputFiles[0]?.text ?? '';
  const { renderToString } = await import('react-dom/server');
  const { createElement } = await import('react');
  const { EmbeddedBoard } = await import('@embed-session/react');
  serverMarkup = renderToString(
    createElement(EmbeddedBoard, { className: 'board', title: 'Roadmap', fetchEmbedUrl: async () => '' }),
  );
}, 120_000);

type HostWindow = { heard: string[][]; asked: number; messageListeners: number; unmountBoard(): void };
const host = (page: Page) =>
  page.evaluate(() => {
    const w = globalThis as unknown as HostWindow;
    return { heard: w.heard, asked: w.asked, messageListeners: w.messageListeners };
  });
const frameSources = (page: Page) =>
  page
    .locator('#root iframe')
    .evaluateAll((frames) => frames.map((f) => (f as unknown as { src: string }).src));

describeInChromium('<EmbeddedBoard> in a React page (StrictMode, hydrated)', () => {
  it('mounts one frame from fetchEmbedUrl, renews it without a second ready, and unmounts clean', async () => {
    expect(serverMarkup).toBe('<div class="board"></div>');
    const page = await browser().newPage({ viewport: { width: 1000, height: 900 } });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    // The page's clock is the test's: the renewal's time comes when the test moves it, not in real seconds.
    await page.clock.install();
    await page.goto(
      site.page(`<script>
// Counts the page's message listeners: StrictMode's second mount must not leave the first one's.
window.messageListeners = 0;
const add = window.addEventListener.bind(window);
const remove = window.removeEventListener.bind(window);
window.addEventListener = (type, listener, options) => { if (type === 'message') messageListeners++; add(type, listener, options); };
window.removeEventListener = (type, listener, options) => { if (type === 'message') messageListeners--; remove(type, listener, options); };
</script>
<div id="root">${serverMarkup}</div>
<script src="/app.js"></script>`),
    );

    // Polled until it comes: the first load (the bundle, StrictMode's mounts, the frame) is real work.
    await expect
      .poll(async () => (await host(page)).heard, { timeout: 10_000 })
      .toEqual([['ready', expect.any(String)]]);
    expect(await frameSources(page)).toEqual([backend.urls[0]]);
    expect(await host(page)).toMatchObject({ asked: 1, messageListeners: 1 });
    expect(await page.locator('#root iframe').getAttribute('title')).toBe('Roadmap');
    expect(await page.locator('#root > div.board > iframe').count()).toBe(1);

    // Three quarters of the first session later (its renewal is due when a third is left, and it has
    // not ended), the component's frame is renewed in place.
    await page.clock.fastForward((3 / 4) * FIRST_SESSION_SECONDS * 1000);
    await expect
      .poll(async () => (await frameSources(page)).join() === (backend.urls[1] ?? 'not yet'), {
        // Polled: the renewal's work (the backend, the new frame loading) is real, its time is not.
        timeout: 10_000,
      })
      .toBe(true);
    const renewed = await host(page);
    expect(renewed.asked).toBe(2);
    expect(backend.asked).toBe(2);
    expect(renewed.heard).toHaveLength(1);
    expect(renewed.messageListeners).toBe(1);
    const frame = page.frames().find((f) => f.url() === backend.urls[1]);
    expect(await frame?.getByTestId('board-name').textContent()).toBe('Product roadmap');

    await page.evaluate(() => (globalThis as unknown as HostWindow).unmountBoard());
    await expect.poll(() => page.locator('iframe').count()).toBe(0);
    expect((await host(page)).messageListeners).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});
