import { randomBytes } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { describeInChromium, useChromium, useCustomerSite } from '#test/support/browser';
import { storeSession } from '#test/support/local-runtime';
import { quickstartHtml } from '#test/support/quickstart';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The quickstart's embedding snippet, run as written on a customer's page: when the session expires it asks
 * the customer's backend once for a new embedUrl, and stops when that one is no better. The snippet it
 * replaced (`onExpired: () => location.reload()` with a fixed embedUrl) reloaded the page without end.
 */

/**
 * The quickstart's one html block holding the host script tag, with the script pointed at `baseUrl` and
 * `embedUrl` rendered into it, as the customer's server renders it (HTML-escaped).
 */
function quickstartSnippet(baseUrl: string, embedUrl = ''): string {
  const attribute = embedUrl.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  return quickstartHtml()
    .replace(/https?:\/\/[^/"]+(\/embed\.js\?v=)/, `${baseUrl}$1`)
    .replace(/data-embed-url="[^"]*"/, () => `data-embed-url="${attribute}"`);
}

/** The path the snippet asks for a new embedUrl: the customer's backend route. */
function renewalPath(snippet: string): string {
  const path = /fetch\('([^']+)'/.exec(snippet)?.[1];
  if (!path) throw new Error('the quickstart snippet asks no backend route for a new embedUrl');
  return path;
}

const runtime = useTestRuntime();
const browser = useChromium();
/** What the customer's backend answers for a new embedUrl, and how often it was asked. */
let renewal: { status: number; embedUrl?: string; asked: number };
/** The customer's backend route for a new embedUrl, as the snippet asks it. */
let path: string;
const site = useCustomerSite({
  route: (req, res) => {
    if (req.method !== 'POST' || req.url !== path) return false;
    renewal.asked++;
    res.writeHead(renewal.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(renewal.embedUrl ? { embedUrl: renewal.embedUrl } : { error: 'no session' }));
    return true;
  },
});

/** An embedUrl whose session expired a minute ago. */
async function expiredEmbedUrl(): Promise<string> {
  const token = randomBytes(24).toString('base64url');
  await storeSession(runtime, token, {
    boardId: runtime.demo?.publicBoardId as string,
    expiresAt: new Date(Date.now() - 60_000).toISOString(),
  });
  return `${runtime.baseUrl}/embed?token=${token}`;
}

beforeAll(() => {
  path = renewalPath(quickstartSnippet(runtime.baseUrl));
});

/**
 * The customer's page: the quickstart's snippet with `embedUrl` rendered into it. The page counts its own
 * calls to fetch and, after the snippet's listener, every `expired` message a frame posts.
 */
async function openCustomerPage(embedUrl: string) {
  const url = site.page(
    `<script>
  window.fetches = 0;
  const realFetch = window.fetch.bind(window);
  window.fetch = (...args) => { window.fetches++; return realFetch(...args); };
</script>
${quickstartSnippet(runtime.baseUrl, embedUrl)}
<script>
  window.expiredMessages = 0;
  addEventListener('message', (event) => {
    if (event.data && event.data.type === 'expired') window.expiredMessages++;
  });
</script>`,
  );
  const page = await browser.newPage();
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations++;
  });
  await page.goto(url);
  return { page, navigations: () => navigations };
}

type Counters = { fetches: number; expiredMessages: number };
const counters = (page: import('playwright-core').Page) =>
  page.evaluate(() => {
    const w = globalThis as unknown as Counters;
    return { fetches: w.fetches, expiredMessages: w.expiredMessages };
  });

describeInChromium("the quickstart's embedding snippet", () => {
  it('asks the backend once for a new link when the session expires, and stops when that one is expired too', async () => {
    renewal = { status: 200, embedUrl: await expiredEmbedUrl(), asked: 0 };
    const { page, navigations } = await openCustomerPage(await expiredEmbedUrl());
    // The first link's expiry, then the renewed link's: the snippet's listener has run for both.
    await page.waitForFunction(() => (globalThis as unknown as Counters).expiredMessages >= 2);
    expect(await counters(page)).toEqual({ fetches: 1, expiredMessages: 2 });
    expect(renewal.asked).toBe(1);
    expect(await page.locator('iframe').count()).toBe(1);
    expect(await page.locator('iframe').getAttribute('src')).toBe(renewal.embedUrl);
    expect(navigations()).toBe(1);
    await page.close();
  });

  it('keeps the expired notice and asks no more when the backend cannot give a new link', async () => {
    renewal = { status: 401, asked: 0 };
    const embedUrl = await expiredEmbedUrl();
    const { page, navigations } = await openCustomerPage(embedUrl);
    await page.waitForFunction(() => (globalThis as unknown as Counters).expiredMessages >= 1);
    await expect.poll(() => renewal.asked).toBe(1);
    expect((await counters(page)).fetches).toBe(1);
    expect(await page.locator('iframe').getAttribute('src')).toBe(embedUrl);
    expect(navigations()).toBe(1);
    await page.close();
  });

  it('shows the new board when the backend gives a usable link', async () => {
    const fresh = await fetch(`${runtime.baseUrl}/api/embed/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${runtime.demo?.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        boardId: runtime.demo?.publicBoardId,
        userId: 'customer-42',
        email: 'ada@example.com',
      }),
    });
    renewal = { status: 200, embedUrl: ((await fresh.json()) as { embedUrl: string }).embedUrl, asked: 0 };
    const { page } = await openCustomerPage(await expiredEmbedUrl());
    await page.frameLocator('iframe').locator('#embed-board').waitFor();
    expect(await page.locator('iframe').getAttribute('src')).toBe(renewal.embedUrl);
    expect(renewal.asked).toBe(1);
    await page.close();
  });
});
