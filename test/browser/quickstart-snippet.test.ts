import { randomBytes } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { describeInChromium, useChromium, useCustomerSite } from '#test/support/browser';
import { storeSession } from '#test/support/local-runtime';
import { quickstartHtml } from '#test/support/quickstart';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The quickstart's embedding snippet, run as written on a customer's page: it renews the session through
 * the customer's backend (fetchEmbedUrl), and when the backend gives nothing usable it backs off and gives
 * up with onError. A snippet of old (`onExpired: () => location.reload()` with a fixed embedUrl) reloaded
 * the page without end.
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
 * The customer's page: the quickstart's snippet with `embedUrl` rendered into it, in a browser whose clock
 * the test can move on (to skip the renewal's back-off). The page counts its own calls to fetch; the test
 * keeps what the snippet logs (its onError).
 */
async function openCustomerPage(embedUrl: string) {
  const url = site.page(
    `<script>
  window.fetches = 0;
  const realFetch = window.fetch.bind(window);
  window.fetch = (...args) => { window.fetches++; return realFetch(...args); };
</script>
${quickstartSnippet(runtime.baseUrl, embedUrl)}`,
  );
  const context = await browser().newContext();
  await context.clock.install();
  const page = await context.newPage();
  const warnings: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations++;
  });
  await page.goto(url);
  return { page, context, warnings, navigations: () => navigations };
}

const fetches = (page: import('playwright-core').Page) =>
  page.evaluate(() => (globalThis as unknown as { fetches: number }).fetches);

describeInChromium("the quickstart's embedding snippet", () => {
  it('renews a link that had expired before the page showed it: the new board takes the frame’s place', async () => {
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
    const { page, context, warnings, navigations } = await openCustomerPage(await expiredEmbedUrl());
    await expect.poll(() => page.locator('iframe').getAttribute('src')).toBe(renewal.embedUrl);
    await page.frameLocator('iframe').locator('#embed-board').waitFor();
    expect(await page.locator('iframe').count()).toBe(1);
    expect(renewal.asked).toBe(1);
    expect(await fetches(page)).toBe(1);
    expect(warnings).toEqual([]);
    expect(navigations()).toBe(1);
    await context.close();
  });

  it.each([
    [
      'answers a link that is expired too',
      async () => ({ status: 200, embedUrl: await expiredEmbedUrl(), asked: 0 }),
    ],
    ['cannot give a new link', async () => ({ status: 401, asked: 0 })],
  ])('backs off and gives up, never reloading the page, when the backend %s', async (_label, answer) => {
    renewal = await answer();
    const embedUrl = await expiredEmbedUrl();
    const { page, context, warnings, navigations } = await openCustomerPage(embedUrl);
    // Four attempts, 1 s, 2 s and 4 s apart: the test moves the page's clock over each wait.
    for (let attempt = 1; attempt <= 4; attempt++) {
      await expect.poll(() => renewal.asked).toBe(attempt);
      await expect.poll(() => page.locator('iframe').count()).toBe(1);
      await page.clock.fastForward(5_000);
    }
    await expect.poll(() => warnings).toEqual([expect.stringMatching(/^board: renewal_failed /)]);
    await page.clock.fastForward(10 * 60_000);
    expect(renewal.asked).toBe(4);
    expect(await fetches(page)).toBe(4);
    // The frame still shows the first link's expired notice; the page was never reloaded.
    expect(await page.locator('iframe').getAttribute('src')).toBe(embedUrl);
    expect(await page.frameLocator('iframe').getByTestId('embed-error').textContent()).toContain(
      'Your access to this board has ended.',
    );
    expect(navigations()).toBe(1);
    await context.close();
  });
});
