import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { afterEach, expect, it } from 'vitest';
import { FRAME_SCRIPT } from '#lib/adapters/http/embed/frame-script';
import {
  describeInChromium,
  recordingMountOptions,
  useChromium,
  useCustomerSite,
} from '#test/support/browser';
import { createSessionAs, demoKey } from '#test/support/create-session-as';
import { storeSession } from '#test/support/local-runtime';
import { MARKUP_FIELDS } from '#test/support/markup-payloads';
import { useTestRuntime } from '#test/support/runtime-fixture';

const ARTIFACTS = join(import.meta.dirname, '../artifacts');
// A 1×1 transparent PNG served as the avatar, so the test sees the image request and its headers.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

const runtime = useTestRuntime();
const browser = useChromium();
const EMBEDDING_DOC = readFileSync(join(import.meta.dirname, '../../docs/embedding.md'), 'utf8');
const avatarRequests: IncomingHttpHeaders[] = [];

/** The iframe snippet of docs/embedding.md, so the test proves what customers are told to paste. */
const README_IFRAME = (() => {
  const snippets = [...EMBEDDING_DOC.matchAll(/^```html\r?\n(<iframe\b[\s\S]*?<\/iframe>)\r?\n```/gm)].map(
    (m) => m[1],
  );
  if (snippets.length !== 1 || !snippets[0]) {
    throw new Error(
      `docs/embedding.md must hold exactly one \`\`\`html iframe snippet, found ${snippets.length}`,
    );
  }
  return snippets[0];
})();

/**
 * The host script tag of docs/embedding.md, pointed at the local runtime: the browser then checks its
 * integrity hash against the bytes served, as it will on a customer's page.
 */
function hostScriptTag(): string {
  const tags = [
    ...EMBEDDING_DOC.matchAll(/<script src="https?:\/\/[^/"]+(\/embed\.js\?v=[0-9a-f]+)"([^>]*)><\/script>/g),
  ];
  if (tags.length !== 1) {
    throw new Error(`docs/embedding.md must hold exactly one embed.js script tag, found ${tags.length}`);
  }
  const [, path, attributes] = tags[0] as RegExpMatchArray;
  return `<script src="${runtime.baseUrl}${path}"${attributes}></script>`;
}

/** The README's snippet framing `embedUrl`. */
function iframeFor(embedUrl: string): string {
  const iframe = README_IFRAME.replace(/\bsrc="[^"]*"/, `src="${embedUrl}"`);
  if (iframe === README_IFRAME) throw new Error('the README iframe snippet has no src attribute');
  return iframe;
}

/**
 * The customer's site: another origin (localhost vs the API's 127.0.0.1) that frames embedUrl with the
 * README's snippet. Pages are looked up by id so the host page's own URL never holds a token.
 */
const site = useCustomerSite({
  route: (req, res) => {
    if (req.url !== '/avatar.png') return false;
    avatarRequests.push(req.headers);
    res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
    return true;
  },
  document: (body) => `<!doctype html>
<html><head><title>Customer app</title></head>
<body style="margin:0;font-family:sans-serif">
<h1 style="font-size:16px;margin:12px">Acme CRM: your board</h1>
${body}
</body></html>`,
});
const hostPage = (body: string) => site.page(body);

/** Opens the host page framing `embedUrl`; records every request and its Referer. */
async function openFramed(embedUrl: string, width = 960, context?: BrowserContext) {
  const url = hostPage(iframeFor(embedUrl));
  const page = await (context ?? browser()).newPage({ viewport: { width, height: 640 } });
  const requests: Request[] = [];
  page.on('request', (request) => requests.push(request));
  await page.goto(url);
  // Every Referer the page's requests carried (allHeaders includes the ones Chromium adds itself).
  const referers = async () =>
    (await Promise.all(requests.map((r) => r.allHeaders())))
      .map((h) => h.referer)
      .filter((r): r is string => !!r);
  return { page, frame: page.frameLocator('iframe'), requests, referers };
}

/** The little of the DOM the layout check reads (the project compiles without DOM types). */
type FrameDocument = {
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelector(selector: string): { getBoundingClientRect(): { width: number } } | null;
};

const createSession = (extra: Record<string, unknown>) => createSessionAs(runtime, demoKey(runtime), extra);

/** What the host page records of the host script: its callbacks, and each height it gave the frame. */
type HostEvent = {
  type: string;
  detail?: { sessionId?: string; code?: string; height?: number };
  height?: number;
};
type HostWindow = {
  embedEvents: HostEvent[];
  heights: Array<{ height: string; frame: number }>;
  hostFrames: number;
  rawMessages: Array<{ type?: string; sessionId?: string }>;
  document: { getElementById(id: string): { style: { width: string } } | null };
};

/**
 * A host page that loads the host script with the tag of docs/embedding.md and mounts `embedUrl` in
 * `#board`, recording every callback, every height it sets on the frame (with the host's animation frame
 * count at that moment), and every message any frame posts to it.
 */
function mountedBody(embedUrl: string, extra = ''): string {
  return `${hostScriptTag()}
<div id="board" style="width:960px"></div>
${extra}
<script>
window.embedEvents = [];
window.heights = [];
window.rawMessages = [];
window.hostFrames = 0;
(function tick() { window.hostFrames++; requestAnimationFrame(tick); })();
addEventListener('message', (event) => {
  if (event.data && event.data.source === 'embed-session') rawMessages.push(event.data);
});
const handle = EmbedSession.mount('#board', ${recordingMountOptions(embedUrl)});
new MutationObserver(() => heights.push({ height: handle.iframe.style.height, frame: hostFrames }))
  .observe(handle.iframe, { attributes: true, attributeFilter: ['style'] });
</script>`;
}

const hostEvents = (page: Page) => page.evaluate(() => (globalThis as unknown as HostWindow).embedEvents);

/** The embed page's frame inside `page` (the first frame from the API's origin). */
function embedFrame(page: Page) {
  const frame = page.frames().find((f) => f.url().startsWith(`${runtime.baseUrl}/embed?`));
  if (!frame) throw new Error('no embed frame on the page');
  return frame;
}

/** The embed page's content height, measured as its own script measures it. */
type RootDocument = { getElementById(id: string): { getBoundingClientRect(): { height: number } } | null };
const contentHeight = (page: Page) =>
  embedFrame(page).evaluate(() =>
    Math.ceil(
      (globalThis as unknown as { document: RootDocument }).document
        .getElementById('embed-root')
        ?.getBoundingClientRect().height ?? -1,
    ),
  );
const iframeHeight = (page: Page, nth = 0) =>
  page
    .locator('iframe')
    .nth(nth)
    .evaluate(
      (el) =>
        (el as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height,
    );

describeInChromium('embed page in a real browser (Chromium)', () => {
  const pages: Page[] = [];

  // Each test's pages close after it: a host page counts its frames, and an open page keeps drawing them.
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.close().catch(() => undefined);
  });

  it('renders the board and the signed-in user inside a cross-origin iframe, without leaking the token', async () => {
    const created = await createSession({
      firstName: 'Ada',
      lastName: 'Lovelace',
      plan: 'enterprise',
      avatarUrl: `${site.origin}/avatar.png`,
    });
    const { page, frame, referers } = await openFramed(created.embedUrl);
    pages.push(page);

    await expect.poll(() => frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
    expect(await frame.getByTestId('user-name').textContent()).toBe('Ada Lovelace');
    expect(await frame.getByTestId('plan').textContent()).toBe('enterprise');
    await expect
      .poll(() =>
        frame
          .locator('img.avatar-image')
          .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(1);

    expect(avatarRequests.length).toBeGreaterThan(0);
    // no-referrer sends none at all; the browser default would still send the embed page's origin.
    for (const headers of avatarRequests) expect(headers.referer).toBeUndefined();
    expect((await referers()).filter((r) => r.includes(created.token))).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'embed-page.png') });
  });

  it('sends no Referer carrying the token even to the embed page’s own origin', async () => {
    // Same-origin requests are where browsers would otherwise send the full URL, query string included.
    const created = await createSession({ avatarUrl: `${runtime.baseUrl}/health?avatar` });
    const { page, frame, requests } = await openFramed(created.embedUrl);
    pages.push(page);
    await expect.poll(() => frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
    await expect.poll(() => requests.some((r) => r.url().includes('/health?avatar'))).toBe(true);
    const avatar = requests.find((r) => r.url().includes('/health?avatar')) as Request;
    expect((await avatar.allHeaders()).referer ?? '').not.toContain(created.token);
  });

  it('fits a phone-sized frame: no sideways scrolling, and the user’s name and plan still show', async () => {
    const created = await createSession({
      firstName: 'Maximiliana',
      lastName: 'Featherstonehaugh-Worthington',
      plan: 'enterprise-unlimited',
    });
    const { page, frame } = await openFramed(created.embedUrl, 320);
    pages.push(page);
    await expect.poll(() => frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
    const layout = await frame.locator('body').evaluate(() => {
      const doc = (globalThis as unknown as { document: FrameDocument }).document;
      const width = (selector: string) => doc.querySelector(selector)?.getBoundingClientRect().width ?? 0;
      return {
        overflow: doc.documentElement.scrollWidth - doc.documentElement.clientWidth,
        name: width('[data-testid="user-name"]'),
        plan: width('[data-testid="plan"]'),
        board: width('[data-testid="board-name"]'),
      };
    });
    expect(layout.overflow).toBe(0);
    // Wide enough to read: several characters of each, not an ellipsis squeezed to nothing.
    expect(layout.name).toBeGreaterThan(80);
    expect(layout.plan).toBeGreaterThan(40);
    expect(layout.board).toBeGreaterThan(100);
    await page.screenshot({ path: join(ARTIFACTS, 'embed-page-320px.png') });
  });

  it('keeps XSS payloads stored in the session inert and shows them as text', async () => {
    const created = await createSession(MARKUP_FIELDS);
    const { page, frame } = await openFramed(created.embedUrl);
    pages.push(page);

    await expect
      .poll(() => frame.getByTestId('user-name').textContent())
      .toBe(`${MARKUP_FIELDS.firstName} ${MARKUP_FIELDS.lastName}`);
    expect(await frame.getByTestId('plan').textContent()).toBe(MARKUP_FIELDS.plan);
    // Rendered as text, the payloads created no element: no image, and no script but the JSON island and
    // the page's own (which the CSP allows by its hash).
    expect(await frame.locator('img[src="x"]').count()).toBe(0);
    expect(await frame.locator('script').count()).toBe(2);
    expect(await frame.locator('script[type="application/json"]#embed-context').count()).toBe(1);
    expect(await frame.locator('script:not([type])').textContent()).toBe(FRAME_SCRIPT);
    const context = await frame.locator('#embed-context').textContent();
    expect(JSON.parse(context ?? '{}').session.metadata.note).toBe(MARKUP_FIELDS.metadata.note);
  });

  it('shows the initials, not a broken image, when the avatar fails to load', async () => {
    const created = await createSession({
      firstName: 'Ada',
      lastName: 'Lovelace',
      avatarUrl: `${site.origin}/no-such-avatar.png`,
    });
    const { page, frame } = await openFramed(created.embedUrl);
    pages.push(page);
    await expect.poll(() => frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
    await expect.poll(() => frame.locator('img').count()).toBe(0);
    expect(await frame.locator('.avatar.initials').textContent()).toBe('AL');
    expect(await frame.locator('.avatar.initials').isVisible()).toBe(true);
  });

  it('shows the expired page inside the frame once the session has expired', async () => {
    const token = randomBytes(24).toString('base64url');
    await storeSession(runtime, token, {
      boardId: runtime.demo?.publicBoardId as string,
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    const { page, frame } = await openFramed(`${runtime.baseUrl}/embed?token=${token}`);
    pages.push(page);
    await expect
      .poll(() => frame.getByTestId('embed-error').textContent())
      .toContain('Your access to this board has ended.');
    expect(await frame.getByTestId('embed-error').textContent()).not.toContain('401');
    await page.screenshot({ path: join(ARTIFACTS, 'embed-expired.png') });
  });

  it('shows the invalid-link page inside the frame for an unknown token', async () => {
    const { page, frame } = await openFramed(`${runtime.baseUrl}/embed?token=${'x'.repeat(32)}`);
    pages.push(page);
    await expect
      .poll(() => frame.getByTestId('embed-error').textContent())
      .toContain('This link to the board is not valid.');
  });

  it('mounts with the host script: the frame takes the board’s height and follows it within a frame or two', async () => {
    const created = await createSession({ firstName: 'Ada', lastName: 'Lovelace', plan: 'pro' });
    const page = await browser().newPage({ viewport: { width: 1000, height: 800 } });
    pages.push(page);
    await page.goto(hostPage(mountedBody(created.embedUrl)));
    await expect
      .poll(() => hostEvents(page))
      .toContainEqual({ type: 'ready', detail: expect.objectContaining({ sessionId: created.session.id }) });
    const wide = await contentHeight(page);
    expect(await iframeHeight(page)).toBe(wide);

    // A narrower container wraps the board's header, so the board grows; then it shrinks back. How many of
    // the host's frames each change takes: the board's resize observer, its message and the host script's
    // answer. A busy machine can hold any frame back, so a slow round is tried again, up to three rounds; a
    // host script or a board that waited for anything (a debounce, a timer) is slow in every round.
    const rounds: number[][] = [];
    while (rounds.length < 3 && !rounds.some((round) => round.every((frames) => frames <= 2))) {
      const round: number[] = [];
      for (const width of ['320px', '960px']) {
        const before = await contentHeight(page);
        const changedAt = await page.evaluate((w) => {
          const board = (globalThis as unknown as HostWindow).document.getElementById('board');
          if (board) board.style.width = w;
          return (globalThis as unknown as HostWindow).hostFrames;
        }, width);
        await expect.poll(() => contentHeight(page)).not.toBe(before);
        const after = await contentHeight(page);
        await expect.poll(() => iframeHeight(page)).toBe(after);
        const heights = await page.evaluate(() => (globalThis as unknown as HostWindow).heights);
        const resized = heights.find((entry) => entry.height === `${after}px` && entry.frame >= changedAt);
        expect(resized, JSON.stringify({ changedAt, heights })).toBeDefined();
        round.push((resized?.frame ?? Number.POSITIVE_INFINITY) - changedAt);
      }
      rounds.push(round);
    }
    expect(
      rounds.some((round) => round.every((frames) => frames <= 2)),
      `frames per change, by round: ${JSON.stringify(rounds)}`,
    ).toBe(true);
    expect(await contentHeight(page)).toBe(wide);
    const resizes = (await hostEvents(page)).filter((event) => event.type === 'resize');
    expect(resizes.map((event) => event.height)).toContain(wide);
    await page.screenshot({ path: join(ARTIFACTS, 'embed-mounted.png') });
  });

  it('tells the host the board is ready, then that the session expired, and shows the expired view without a reload', async () => {
    const created = await createSession({ expiresInSeconds: 4 });
    const page = await browser().newPage({ viewport: { width: 1000, height: 800 } });
    pages.push(page);
    const embedLoads: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${runtime.baseUrl}/embed?`)) embedLoads.push(request.url());
    });
    await page.goto(hostPage(mountedBody(created.embedUrl)));
    await expect
      .poll(() => hostEvents(page))
      .toContainEqual({
        type: 'ready',
        detail: {
          sessionId: created.session.id,
          boardId: runtime.demo?.publicBoardId,
          height: expect.any(Number),
        },
      });
    expect(await hostEvents(page)).not.toContainEqual({ type: 'expired' });
    await expect.poll(() => hostEvents(page), { timeout: 10_000 }).toContainEqual({ type: 'expired' });
    const frame = page.frameLocator('iframe');
    // The client-side expired view: what happened and what to do, and no status code (no request failed).
    expect((await frame.getByTestId('embed-error').innerText()).split('\n').filter(Boolean)).toEqual([
      'Your access to this board has ended.',
      'Reload the page to open the board again.',
    ]);
    expect(embedLoads).toHaveLength(1);
    // The expired notice has its own height, and the frame follows it.
    await expect.poll(() => iframeHeight(page)).toBe(await contentHeight(page));
  });

  it('ignores messages from any other frame, and from the host page itself', async () => {
    const own = await createSession({});
    const other = await createSession({ userId: 'someone-else' });
    // Another embed frame (the same origin as ours) and a frame of the host's own origin forging messages.
    const forger = hostPage(`<script>
setInterval(() => {
  parent.postMessage({ source: 'embed-session', type: 'resize', height: 999 }, '*');
  parent.postMessage({ source: 'embed-session', type: 'ready', sessionId: 'forged', boardId: 'forged', height: 999 }, '*');
  parent.postMessage({ source: 'embed-session', type: 'expired' }, '*');
}, 50);
</script>`);
    const extra = `${iframeFor(other.embedUrl)}
<iframe src="${forger}" title="forger"></iframe>
<script>setInterval(() => postMessage({ source: 'embed-session', type: 'error', code: 'forged', height: 999 }, '*'), 50);</script>`;
    const page = await browser().newPage({ viewport: { width: 1000, height: 1400 } });
    pages.push(page);
    await page.goto(hostPage(mountedBody(own.embedUrl, extra)));

    // Every kind of stranger's message has reached the page…
    const raw = () => page.evaluate(() => (globalThis as unknown as HostWindow).rawMessages);
    await expect
      .poll(raw)
      .toContainEqual(expect.objectContaining({ type: 'ready', sessionId: other.session.id }));
    await expect.poll(raw).toContainEqual(expect.objectContaining({ type: 'ready', sessionId: 'forged' }));
    await expect.poll(raw).toContainEqual(expect.objectContaining({ type: 'error', code: 'forged' }));
    await expect
      .poll(raw)
      .toContainEqual(expect.objectContaining({ type: 'ready', sessionId: own.session.id }));
    await page.waitForTimeout(300);

    // …and none was taken for the mounted frame's.
    const events = await hostEvents(page);
    expect(events.filter((event) => event.type === 'ready')).toEqual([
      { type: 'ready', detail: expect.objectContaining({ sessionId: own.session.id }) },
    ]);
    expect(events.filter((event) => event.type !== 'ready' && event.type !== 'resize')).toEqual([]);
    expect(events.map((event) => event.height ?? event.detail?.height)).not.toContain(999);
    expect(await iframeHeight(page)).toBe(await contentHeight(page));
  });

  it('lets only the listed hosts frame a board with its own origins, while the default still allows this host', async () => {
    const { runAdmin } = await import('#admin/cli');
    const env = { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, AWS_REGION: 'local' };
    const board = (id: string, origins: string) =>
      runAdmin(
        [
          'create-board',
          '--board',
          id,
          '--org',
          'o',
          '--visibility',
          'PUBLIC',
          '--name',
          id,
          '--embed-origins',
          origins,
        ],
        env,
      );
    await board('acme-only', 'https://app.acme.com,https://*.acme.com');
    await board('lists-this-host', `https://app.acme.com,${site.origin}`);
    const elsewhere = await createSession({ boardId: 'acme-only' });
    const here = await createSession({ boardId: 'lists-this-host' });
    const byDefault = await createSession({});

    for (const [session, shown] of [
      [byDefault, 'Product roadmap'],
      [here, 'lists-this-host'],
    ] as const) {
      const { page, frame } = await openFramed(session.embedUrl);
      pages.push(page);
      await expect.poll(() => frame.getByTestId('board-name').textContent()).toBe(shown);
    }

    const { page } = await openFramed(elsewhere.embedUrl);
    pages.push(page);
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('frame-ancestors')) refusals.push(message.text());
    });
    await page.reload();
    await expect.poll(() => refusals.length).toBeGreaterThan(0);
    expect(refusals[0]).toContain('https://app.acme.com https://*.acme.com');
    // The frame holds Chromium's error page, not the board.
    expect(page.frames().some((f) => f.url().startsWith(`${runtime.baseUrl}/embed?`))).toBe(false);
    expect(await page.frameLocator('iframe').getByTestId('board-name').count()).toBe(0);
  });

  it('renders the dark theme and German texts when the URL asks for them, error pages too', async () => {
    const created = await createSession({ firstName: 'Ada' });
    const { page, frame } = await openFramed(`${created.embedUrl}&theme=dark&locale=de-CH`);
    pages.push(page);
    await expect
      .poll(() => frame.getByTestId('board-empty').textContent())
      .toContain('Noch nichts anzuzeigen');
    expect(await frame.locator('html').getAttribute('lang')).toBe('de');
    expect(await frame.getByTestId('user').textContent()).toContain('Angemeldet als');
    expect(await frame.getByTestId('session-expiry').textContent()).toContain('Zugang bis');
    // The server writes the expiry in UTC; the frame's script writes it in German in the viewer's zone.
    const expiry = frame.getByTestId('session-expiry').locator('time');
    const inGerman = await expiry.evaluate((time) => {
      const at = (time as unknown as { getAttribute(name: string): string | null }).getAttribute('datetime');
      return new Date(at ?? '').toLocaleString('de', { dateStyle: 'medium', timeStyle: 'short' });
    });
    expect(await expiry.textContent()).toBe(inGerman);
    expect(inGerman).not.toContain('UTC');
    const background = () =>
      frame.locator('body').evaluate((body) => {
        const view = globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } };
        return view.getComputedStyle(body).backgroundColor;
      });
    expect(await background()).toBe('rgb(18, 21, 27)');
    await page.screenshot({ path: join(ARTIFACTS, 'embed-dark-de.png') });

    const light = await openFramed(`${created.embedUrl}&theme=light&locale=de`);
    pages.push(light.page);
    await expect.poll(() => light.frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
    expect(
      await light.frame.locator('body').evaluate((body) => {
        const view = globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } };
        return view.getComputedStyle(body).backgroundColor;
      }),
    ).toBe('rgb(246, 247, 249)');

    const error = await openFramed(`${runtime.baseUrl}/embed?token=${'x'.repeat(32)}&theme=dark&locale=de`);
    pages.push(error.page);
    await expect
      .poll(() => error.frame.getByTestId('embed-error').textContent())
      .toContain('Dieser Link zum Board ist ungültig.');
  });

  it('refuses a bound link in a second browser, while reloads in the first keep working', async () => {
    const created = await createSession({ bindToBrowser: true });
    const first = await browser().newContext();
    const second = await browser().newContext();
    try {
      const a = await openFramed(created.embedUrl, 960, first);
      await expect.poll(() => a.frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
      const cookies = await first.cookies(runtime.baseUrl);
      expect(cookies).toEqual([
        expect.objectContaining({
          name: '__Host-embed_binding',
          path: '/',
          secure: true,
          httpOnly: true,
          sameSite: 'None',
          partitionKey: 'http://localhost',
        }),
      ]);

      await a.page.reload();
      await expect.poll(() => a.frame.getByTestId('board-name').textContent()).toBe('Product roadmap');

      const b = await openFramed(created.embedUrl, 960, second);
      await expect
        .poll(() => b.frame.getByTestId('embed-error').textContent())
        .toContain('This link to the board was opened in another browser.');
      expect(await second.cookies(runtime.baseUrl)).toEqual([]);
      await b.page.screenshot({ path: join(ARTIFACTS, 'embed-bound-elsewhere.png') });

      await a.page.reload();
      await expect.poll(() => a.frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
    } finally {
      await first.close();
      await second.close();
    }
  });
});
