import { mkdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, expect, it } from 'vitest';
import { HOST_SCRIPT_VERSION } from '#lib/adapters/http/embed/host-script';
import { describeInChromium, useChromium, useCustomerSite } from '#test/support/browser';
import { createSessionAs, demoKey } from '#test/support/create-session-as';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The host script's own work in Chromium, on a customer's page (another site than the service): renewing
 * a session through the host's fetchEmbedUrl without the user seeing it, once for every tab holding the
 * session; reporting a frame the board refuses to be framed in; several boards on one page.
 */
const ARTIFACTS = join(import.meta.dirname, '../artifacts');
const runtime = useTestRuntime();
const browser = useChromium();

/**
 * The customer's backend: `POST /embed-url` creates a session for the page (the next of `lifetimes`, in
 * seconds, the last one from then on) and answers its embedUrl, as docs/embedding.md tells hosts to.
 */
const backend = { asked: 0, lifetimes: [3600], urls: [] as string[] };
function embedUrlRoute(request: IncomingMessage, response: ServerResponse): boolean {
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
const site = useCustomerSite({ route: embedUrlRoute });

const contexts: BrowserContext[] = [];
// Each test's browser closes after it: an open page keeps drawing frames, and its timers keep running.
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
});

/** A browser context (a user's browser) whose clock is `offsetMs` off the real one. */
async function browserWithClockOff(offsetMs: number): Promise<BrowserContext> {
  const context = await browser().newContext({ viewport: { width: 1000, height: 900 } });
  contexts.push(context);
  await context.clock.install({ time: Date.now() + offsetMs });
  return context;
}

/**
 * A customer's page mounting `embedUrl` in `#board` with the given extra options (page script), recording
 * what the host hears (`heard`), each `ready` a frame posts with the frame's src (`readyFrom`), each call
 * of fetchEmbedUrl (`asked`), and at every animation frame the frames in `#board`: src, opacity, height.
 */
function renewingPage(embedUrl: string, extra = ''): string {
  return `<script src="${runtime.baseUrl}/embed.js?v=${HOST_SCRIPT_VERSION}"></script>
<div id="board" style="width:900px"></div>
<script>
window.heard = [];
window.readyFrom = [];
window.asked = [];
window.samples = [];
const now = () => performance.now();
// The order things happened in: the page's clock may read the same within one of its ticks.
let order = 0;
addEventListener('message', (event) => {
  if (!event.data || event.data.source !== 'embed-session' || event.data.type !== 'ready') return;
  const frame = [...document.querySelectorAll('iframe')].find((f) => f.contentWindow === event.source);
  readyFrom.push({ src: frame ? frame.src : null, at: now(), order: ++order, expiresInMs: event.data.expiresInMs });
});
const stamp = (type, detail) => heard.push({ type, detail, at: now() });
window.handle = EmbedSession.mount('#board', {
  url: ${JSON.stringify(embedUrl)},
  fetchEmbedUrl: async () => {
    asked.push(now());
    const answer = await fetch('/embed-url', { method: 'POST' });
    if (!answer.ok) throw new Error('the backend answered ' + answer.status);
    return (await answer.json()).embedUrl;
  },
  onReady: (detail) => stamp('ready', detail),
  onResize: (height) => stamp('resize', height),
  onExpired: () => stamp('expired'),
  onRevoked: () => stamp('revoked'),
  onError: (detail) => stamp('error', detail),
  ${extra}
});
(function sample() {
  const frames = [...document.querySelectorAll('#board iframe')].map((f) => ({
    src: f.src,
    opacity: getComputedStyle(f).opacity,
    height: f.getBoundingClientRect().height,
  }));
  samples.push({ at: now(), order: ++order, frames });
  requestAnimationFrame(sample);
})();
</script>`;
}

type Heard = { type: string; detail?: { sessionId?: string; code?: string; message?: string }; at: number };
type Sample = { at: number; order: number; frames: Array<{ src: string; opacity: string; height: number }> };
type Recorded = {
  heard: Heard[];
  readyFrom: Array<{ src: string | null; at: number; order: number; expiresInMs?: number }>;
  asked: number[];
  samples: Sample[];
};
const recorded = (page: Page) =>
  page.evaluate(() => {
    const w = globalThis as unknown as Recorded;
    return { heard: w.heard, readyFrom: w.readyFrom, asked: w.asked, samples: w.samples };
  });

/** Whether the page's board shows the link the backend renewed the session with, and only that frame. */
async function showsRenewed(page: Page): Promise<boolean> {
  const frames = (await recorded(page)).samples.at(-1)?.frames ?? [];
  return backend.urls.length > 0 && frames.length === 1 && frames[0]?.src === backend.urls[0];
}

/**
 * Moves the page's clock (every tab and frame of its context) to when a third of the time its frame
 * reported at `ready` is left: the host script's renewal is due then. The clock jumps, so the test waits
 * no real seconds, and the renewal's own work (the backend, the new frame loading) runs in real time.
 */
async function skipToRenewal(page: Page, ready: { at: number; expiresInMs: number }): Promise<void> {
  const pageNow = await page.evaluate(() => performance.now());
  await page.clock.fastForward(Math.max(0, Math.ceil(ready.at + (2 / 3) * ready.expiresInMs - pageNow) + 10));
}

/** A session's lifetime: long enough that its real end never comes while a test runs, on a busy machine. */
const SESSION_SECONDS = 60;

describeInChromium('the host script in Chromium: renewal, refusals, several boards', () => {
  it('renews a session through fetchEmbedUrl before it ends: no blank frame, one ready, the height kept, the clock minutes off', async () => {
    const first = await createSessionAs(runtime, demoKey(runtime), { expiresInSeconds: SESSION_SECONDS });
    backend.asked = 0;
    backend.lifetimes = [3600];
    backend.urls = [];
    // Seven minutes ahead: a host script that trusted the browser's clock would renew at once.
    const context = await browserWithClockOff(7 * 60_000);
    const page = await context.newPage();
    await page.goto(site.page(renewingPage(first.embedUrl)));
    await expect.poll(async () => (await recorded(page)).heard.map((h) => h.type)).toContain('ready');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'renewal-before.png') });

    // The renewed board is shown before the first session ends, then the first one's end passes unseen:
    // the page's clock is moved on to each, not waited for.
    const firstReady = (await recorded(page)).readyFrom[0] as { at: number; expiresInMs: number };
    await skipToRenewal(page, firstReady);
    // Polled: the renewal's work (the backend, the new frame loading) is real, its time is not.
    await expect.poll(() => showsRenewed(page), { timeout: 10_000 }).toBe(true);
    await page.clock.fastForward(firstReady.expiresInMs);
    await page.screenshot({ path: join(ARTIFACTS, 'renewal-after.png') });

    const { heard, readyFrom, asked, samples } = await recorded(page);
    expect(backend.asked).toBe(1);
    expect(asked).toHaveLength(1);
    const ready = heard.find((h) => h.type === 'ready') as Heard;
    expect(heard.filter((h) => h.type === 'ready')).toEqual([ready]);
    expect(ready.detail?.sessionId).toBe(first.session.id);
    expect(heard.filter((h) => h.type !== 'ready' && h.type !== 'resize')).toEqual([]);
    // Asked when a third of the time the frame reported was left, counted from its report (the service's
    // count), not from the browser's clock, which would have the session long over.
    const reported = readyFrom[0]?.expiresInMs as number;
    expect(reported).toBeGreaterThan((SESSION_SECONDS - 5) * 1000);
    expect(reported).toBeLessThanOrEqual(SESSION_SECONDS * 1000);
    expect((asked[0] as number) - ready.at).toBeGreaterThan((2 / 3) * reported - 250);
    expect((asked[0] as number) - ready.at).toBeLessThan(reported);
    // Both frames said ready to the page; the host heard the first only.
    expect(readyFrom.map((r) => r.src)).toEqual([first.embedUrl, backend.urls[0]]);

    // Every animation frame from the first ready on: exactly one frame visible, at the board's height,
    // never the default 150 px; the renewed frame loaded out of sight and showed only once it was ready.
    const firstOrder = (readyFrom[0] as { order: number }).order;
    const shown = samples.filter((s) => s.order > firstOrder);
    const visible = shown.map((s) => s.frames.filter((f) => f.opacity !== '0'));
    expect(visible.every((frames) => frames.length === 1)).toBe(true);
    const heights = new Set(visible.map((frames) => frames[0]?.height));
    expect([...heights].every((h) => (h ?? 0) > 150)).toBe(true);
    expect(shown.some((s) => s.frames.length === 2)).toBe(true);
    const swapped = shown.find((s) =>
      s.frames.some((f) => f.src === backend.urls[0] && f.opacity !== '0'),
    ) as Sample;
    expect(swapped.order).toBeGreaterThan((readyFrom[1] as { order: number }).order);
    // …before the first session ended.
    expect(swapped.at).toBeLessThan(ready.at + reported);
    expect(shown.filter((s) => s.order >= swapped.order).every((s) => s.frames.length === 1)).toBe(true);

    const renewed = page.frames().find((f) => f.url() === backend.urls[0]);
    expect(await renewed?.getByTestId('board-name').textContent()).toBe('Product roadmap');
  });

  it('renews once for two tabs holding the same session: one asks the backend, the other takes its link', async () => {
    const first = await createSessionAs(runtime, demoKey(runtime), { expiresInSeconds: SESSION_SECONDS });
    backend.asked = 0;
    backend.lifetimes = [3600];
    backend.urls = [];
    const context = await browserWithClockOff(-5 * 60_000);
    const tabs = [await context.newPage(), await context.newPage()];
    const url = site.page(renewingPage(first.embedUrl));
    await Promise.all(tabs.map((tab) => tab.goto(url)));
    for (const tab of tabs) {
      await expect.poll(async () => (await recorded(tab)).heard.map((h) => h.type)).toContain('ready');
    }
    // The tabs share their browser's clock: moving it to the later of their renewals makes both due.
    const readies = await Promise.all(
      tabs.map(async (tab) => (await recorded(tab)).readyFrom[0] as { at: number; expiresInMs: number }),
    );
    for (const [index, tab] of tabs.entries())
      await skipToRenewal(tab, readies[index] as (typeof readies)[0]);
    for (const tab of tabs) {
      await expect.poll(() => showsRenewed(tab), { timeout: 10_000 }).toBe(true);
    }
    const [a, b] = await Promise.all(tabs.map(recorded));
    expect(backend.asked).toBe(1);
    expect([...(a?.asked ?? []), ...(b?.asked ?? [])]).toHaveLength(1);
    for (const tab of [a, b]) {
      expect(tab?.heard.filter((h) => h.type === 'ready')).toHaveLength(1);
      expect(tab?.heard.filter((h) => h.type === 'error' || h.type === 'expired')).toEqual([]);
    }
  });

  it('reports a frame the board refuses to be framed in with ready_timeout, within the readyTimeout', async () => {
    const { runAdmin } = await import('#admin/cli');
    await runAdmin(
      [
        ...['create-board', '--board', 'framed-by-acme-only', '--org', 'o', '--visibility', 'PUBLIC'],
        ...['--name', 'Acme only', '--embed-origins', 'https://app.acme.com'],
      ],
      { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, AWS_REGION: 'local' },
    );
    const refused = await createSessionAs(runtime, demoKey(runtime), { boardId: 'framed-by-acme-only' });
    backend.asked = 0;
    const context = await browserWithClockOff(0);
    const page = await context.newPage();
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('frame-ancestors')) refusals.push(message.text());
    });
    await page.goto(site.page(renewingPage(refused.embedUrl, 'readyTimeout: 1500,')));
    await expect
      .poll(async () => (await recorded(page)).heard.map((h) => h.type), { timeout: 4_000 })
      .toContain('error');
    const { heard, samples } = await recorded(page);
    expect(refusals.length).toBeGreaterThan(0);
    expect(heard.map((h) => [h.type, h.detail?.code])).toEqual([['error', 'ready_timeout']]);
    expect(heard[0]?.detail?.message).toContain('framing refused');
    // Counted from when the frame came into view, at the start: 1.5 s, give or take the page's own work.
    const mountedAt = samples[0]?.at as number;
    expect((heard[0]?.at as number) - mountedAt).toBeGreaterThanOrEqual(1_400);
    expect((heard[0]?.at as number) - mountedAt).toBeLessThan(2_500);
    // A refused frame is no expired session: nothing is renewed.
    expect(backend.asked).toBe(0);
  });

  it('keeps three boards on one page apart: each hears its own frame, and destroying one leaves the others working', async () => {
    const sessions = await Promise.all(
      ['one', 'two', 'three'].map((name) =>
        createSessionAs(runtime, demoKey(runtime), { userId: `board-${name}` }),
      ),
    );
    const context = await browserWithClockOff(0);
    const page = await context.newPage();
    await page.goto(
      site.page(`<script>
// Counts the page's message listeners, to see destroy() take its own away.
window.messageListeners = 0;
const add = window.addEventListener.bind(window);
const remove = window.removeEventListener.bind(window);
window.addEventListener = (type, listener, options) => { if (type === 'message') messageListeners++; add(type, listener, options); };
window.removeEventListener = (type, listener, options) => { if (type === 'message') messageListeners--; remove(type, listener, options); };
</script>
<script src="${runtime.baseUrl}/embed.js?v=${HOST_SCRIPT_VERSION}"></script>
${sessions.map((_, i) => `<div id="board-${i}" style="width:900px"></div>`).join('\n')}
<script>
window.heard = [[], [], []];
window.handles = ${JSON.stringify(sessions.map((s) => s.embedUrl))}.map((url, i) =>
  EmbedSession.mount('#board-' + i, {
    url,
    onReady: (detail) => heard[i].push(['ready', detail.sessionId]),
    onResize: (height) => heard[i].push(['resize', height]),
    onExpired: () => heard[i].push(['expired']),
    onError: (detail) => heard[i].push(['error', detail.code]),
  }));
</script>`),
    );
    type Boards = { heard: unknown[][][]; messageListeners: number };
    const heard = () => page.evaluate(() => (globalThis as unknown as Boards).heard);
    await expect
      .poll(async () => (await heard()).map((h) => h[0]))
      .toEqual(sessions.map((s) => ['ready', s.session.id]));
    expect(await page.evaluate(() => (globalThis as unknown as Boards).messageListeners)).toBe(3);

    await page.evaluate(() =>
      (globalThis as unknown as { handles: Array<{ destroy(): void }> }).handles[1]?.destroy(),
    );
    expect(await page.locator('iframe').count()).toBe(2);
    expect(await page.locator('#board-1 iframe').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as Boards).messageListeners)).toBe(2);

    // The remaining boards narrow, so their boards grow: each frame follows its own board.
    const before = await heard();
    await page.evaluate(() => {
      const doc = (
        globalThis as unknown as {
          document: { querySelectorAll(s: string): Array<{ style: { width: string } }> };
        }
      ).document;
      for (const board of doc.querySelectorAll('div[id^="board-"]')) board.style.width = '320px';
    });
    await expect.poll(async () => (await heard())[0]?.length).toBeGreaterThan(before[0]?.length ?? 0);
    await expect.poll(async () => (await heard())[2]?.length).toBeGreaterThan(before[2]?.length ?? 0);
    const after = await heard();
    expect(after[1]).toEqual(before[1]);
    for (const index of [0, 2]) {
      const own = after[index] ?? [];
      expect(own.filter(([type]) => type === 'ready')).toEqual([['ready', sessions[index]?.session.id]]);
      expect(own.filter(([type]) => type !== 'ready' && type !== 'resize')).toEqual([]);
    }
    const frameHeights = await page
      .locator('iframe')
      .evaluateAll((frames) =>
        frames.map(
          (f) =>
            (f as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height,
        ),
      );
    for (const [index, height] of frameHeights.entries()) {
      const own = after[index === 0 ? 0 : 2] ?? [];
      expect(height).toBe(own.filter(([type]) => type === 'resize').at(-1)?.[1]);
    }
  });
});
