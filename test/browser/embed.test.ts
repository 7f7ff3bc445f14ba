import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page, type Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '#local/runtime';
import { createSessionCall, startTestRuntime, storeSession } from '#test/support/local-runtime';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skipReason = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (install Debian's chromium or set CHROMIUM_PATH)`;
if (skipReason) console.warn(`[browser tests skipped] ${skipReason}`);

const ARTIFACTS = join(import.meta.dirname, '../artifacts');
// A 1×1 transparent PNG served as the avatar, so the test sees the image request and its headers.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

let runtime: LocalRuntime;
let host: Server;
let hostOrigin: string;
let browser: Browser;
const hostPages = new Map<string, string>();
const avatarRequests: IncomingHttpHeaders[] = [];

/** The iframe snippet of docs/embedding.md, so the test proves what customers are told to paste. */
const README_IFRAME = (() => {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/embedding.md'), 'utf8');
  const snippets = [...doc.matchAll(/^```html\r?\n(<iframe\b[\s\S]*?<\/iframe>)\r?\n```/gm)].map((m) => m[1]);
  if (snippets.length !== 1 || !snippets[0]) {
    throw new Error(
      `docs/embedding.md must hold exactly one \`\`\`html iframe snippet, found ${snippets.length}`,
    );
  }
  return snippets[0];
})();

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
function startHost(): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/avatar.png') {
      avatarRequests.push(req.headers);
      res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
      return;
    }
    const embedUrl = hostPages.get(req.url?.slice(1) ?? '');
    if (!embedUrl) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html><head><title>Customer app</title></head>
<body style="margin:0;font-family:sans-serif">
<h1 style="font-size:16px;margin:12px">Acme CRM: your board</h1>
${iframeFor(embedUrl)}
</body></html>`);
  });
  server.listen(0, '127.0.0.1');
  return new Promise((resolve) => server.once('listening', () => resolve(server)));
}

/** Opens the host page framing `embedUrl`; records every request and its Referer. */
async function openFramed(embedUrl: string, width = 960) {
  const id = randomBytes(6).toString('hex');
  hostPages.set(id, embedUrl);
  const page = await browser.newPage({ viewport: { width, height: 640 } });
  const requests: Request[] = [];
  page.on('request', (request) => requests.push(request));
  await page.goto(`${hostOrigin}/${id}`);
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

async function createSession(extra: Record<string, unknown>) {
  const result = await createSessionCall(runtime, {
    boardId: runtime.demo?.publicBoardId,
    userId: 'customer-42',
    email: 'ada@example.com',
    ...extra,
  });
  expect(result.status).toBe(201);
  return result.body as { sessionToken: string; embedUrl: string };
}

describe.skipIf(skipReason !== undefined)('embed page in a real browser (Chromium)', () => {
  const pages: Page[] = [];

  beforeAll(async () => {
    runtime = await startTestRuntime();
    host = await startHost();
    // "localhost" and "127.0.0.1" are different origins: the host page is cross-origin to the embed.
    hostOrigin = `http://localhost:${(host.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    for (const page of pages) await page.close().catch(() => undefined);
    await browser?.close();
    host?.close();
    await runtime?.close();
  });

  it('renders the board and the signed-in user inside a cross-origin iframe, without leaking the token', async () => {
    const created = await createSession({
      firstName: 'Ada',
      lastName: 'Lovelace',
      plan: 'enterprise',
      avatarUrl: `${hostOrigin}/avatar.png`,
    });
    const { page, frame, referers } = await openFramed(created.embedUrl);
    pages.push(page);

    await expect.poll(() => frame.getByTestId('board-name').textContent()).toBe('Product roadmap');
    expect(await frame.getByTestId('user-name').textContent()).toBe('Ada Lovelace');
    expect(await frame.getByTestId('plan').textContent()).toBe('enterprise');
    await expect
      .poll(() =>
        frame
          .locator('img.avatar')
          .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(1);

    expect(avatarRequests.length).toBeGreaterThan(0);
    // no-referrer sends none at all; the browser default would still send the embed page's origin.
    for (const headers of avatarRequests) expect(headers.referer).toBeUndefined();
    expect((await referers()).filter((r) => r.includes(created.sessionToken))).toEqual([]);

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
    expect((await avatar.allHeaders()).referer ?? '').not.toContain(created.sessionToken);
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
    const scriptPayload = '<script>alert(1)</script>';
    const attributePayload = '"><img src=x onerror=alert(1)>';
    const created = await createSession({
      firstName: scriptPayload,
      lastName: attributePayload,
      plan: '<img src=x onerror=alert(2)>',
      metadata: { note: '</script><script>alert(3)</script>' },
    });
    const { page, frame } = await openFramed(created.embedUrl);
    pages.push(page);

    await expect
      .poll(() => frame.getByTestId('user-name').textContent())
      .toBe(`${scriptPayload} ${attributePayload}`);
    expect(await frame.getByTestId('plan').textContent()).toBe('<img src=x onerror=alert(2)>');
    // Rendered as text, the payloads created no element: no image, and no script but the JSON island.
    expect(await frame.locator('img[src="x"]').count()).toBe(0);
    expect(await frame.locator('script').count()).toBe(1);
    expect(await frame.locator('script[type="application/json"]#embed-context').count()).toBe(1);
    const context = await frame.locator('#embed-context').textContent();
    expect(JSON.parse(context ?? '{}').session.metadata.note).toBe('</script><script>alert(3)</script>');
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
      .toContain('This embed session has expired');
    await page.screenshot({ path: join(ARTIFACTS, 'embed-expired.png') });
  });

  it('shows the invalid-link page inside the frame for an unknown token', async () => {
    const { page, frame } = await openFramed(`${runtime.baseUrl}/embed?token=${'x'.repeat(32)}`);
    pages.push(page);
    await expect
      .poll(() => frame.getByTestId('embed-error').textContent())
      .toContain('This embed link is not valid');
  });
});
