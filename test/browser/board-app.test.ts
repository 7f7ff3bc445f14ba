import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main as adminMain } from '#admin/cli';
import { HOST_SCRIPT_VERSION } from '#lib/adapters/http/embed/host-script';
import { TEXTS } from '#lib/adapters/http/embed/i18n';
import {
  describeInChromium,
  recordingMountOptions,
  useChromium,
  useCustomerSite,
} from '#test/support/browser';
import { apiCall, createSessionCall, ensureStatus } from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { type RunningBoardApp, startBoardApp } from '../../examples/board-app/server';

/**
 * The reference board application in Chromium, through the real hand-off: a customer's page (on
 * `localhost`, another site than the service and the app on 127.0.0.1) mounts an embedUrl with the host
 * script; the embed page posts the ID token to the app, which sets its partitioned cookie in the frame and
 * shows the board as the user, telling the host page through `/embed-board.js`.
 */
const runtime = useTestRuntime();
let app: RunningBoardApp;
const browser = useChromium();
/** The customer's backend: `POST /embed-url` answers a new session's embedUrl on the application's board. */
const backend = { asked: 0, urls: [] as string[] };
const site = useCustomerSite({
  route: (request, response) => {
    if (request.method !== 'POST' || request.url !== '/embed-url') return false;
    backend.asked++;
    embedUrlFor(`customer-renewed-${backend.asked}`).then(
      ({ embedUrl }) => {
        backend.urls.push(embedUrl);
        response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ embedUrl }));
      },
      () => response.writeHead(502).end(),
    );
    return true;
  },
});
const opened: Page[] = [];

beforeAll(async () => {
  app = await startBoardApp({ port: 0 });
  app.serve({ issuer: runtime.baseUrl });
  await putPublicBoard(runtime, 'board_reference_app', 'org_demo', {
    name: 'Feature requests',
    appUrl: app.appUrl,
    logoutUrl: `${app.origin}/backchannel-logout`,
  });
}, 120_000);

// Each test's pages close after it: an open page keeps drawing frames, and its timers keep running.
afterEach(async () => {
  for (const page of opened.splice(0)) await page.close().catch(() => undefined);
});
afterAll(async () => {
  await app?.close();
});

const hostPage = (body: string) => site.page(body);

async function embedUrlFor(
  userId: string,
  extra: Record<string, unknown> = {},
): Promise<{ embedUrl: string; sessionId: string; expiresAt: string }> {
  const created = await createSessionCall(runtime, {
    boardId: 'board_reference_app',
    userId,
    email: 'ada@example.com',
    firstName: 'Ada',
    lastName: 'Lovelace',
    ...extra,
  });
  ensureStatus(created, 201);
  const session = created.body.session as { id: string; expiresAt: string };
  return { embedUrl: created.body.embedUrl as string, sessionId: session.id, expiresAt: session.expiresAt };
}

type HostEvent = { type: string; detail?: { sessionId?: string; boardId?: string }; height?: number };
type HostWindow = { embedEvents: HostEvent[]; readyMessages: string[] };

/** A customer's page mounting `embedUrl` with the host script, recording every callback. */
function mountedPage(embedUrl: string, extra = ''): string {
  return `<script src="${runtime.baseUrl}/embed.js?v=${HOST_SCRIPT_VERSION}"></script>
<div id="board"></div>
${extra}
<script>
window.embedEvents = [];
window.readyMessages = [];
addEventListener('message', (event) => {
  if (event.data && event.data.type === 'ready') readyMessages.push(event.origin);
});
EmbedSession.mount('#board', ${recordingMountOptions(embedUrl)});
</script>`;
}

/** A new browser's page on `url`; with `clock`, its clock (every frame's) is the test's to move. */
async function open(url: string, options: { clock?: boolean } = {}): Promise<Page> {
  const page = await browser().newPage({ viewport: { width: 900, height: 900 } });
  opened.push(page);
  if (options.clock) await page.clock.install();
  await page.goto(url);
  return page;
}

const hostEvents = (page: Page) => page.evaluate(() => (globalThis as unknown as HostWindow).embedEvents);

/** How many `ready` messages the board application's frames posted to the page. */
const readyFrom = async (page: Page) =>
  (await page.evaluate(() => (globalThis as unknown as HostWindow).readyMessages)).filter(
    (origin) => origin === app.origin,
  ).length;

/** The frame of `page` showing the board application, once it does. */
async function appFrame(page: Page) {
  await expect
    .poll(() => page.frames().some((f) => f.url() === `${app.origin}/board`), { timeout: 15_000 })
    .toBe(true);
  return page.frames().find((f) => f.url() === `${app.origin}/board`) as NonNullable<
    ReturnType<Page['frames']>[number]
  >;
}

describeInChromium('the reference board application in the iframe', () => {
  it('shows the board as the user after the hand-off, and the host page hears ready and resize from it', async () => {
    const { embedUrl, sessionId } = await embedUrlFor('customer-browser-1');
    // Another frame of the customer's page forging the board's messages.
    const forger = `<iframe title="forger" srcdoc="<script>setInterval(() => parent.postMessage({ source: 'embed-session', type: 'ready', sessionId: 'forged', height: 999 }, '*'), 50)</script>"></iframe>`;
    const page = await open(hostPage(mountedPage(embedUrl, forger)));
    const frame = await appFrame(page);
    expect(await frame.locator('#user-name').textContent()).toBe('Ada Lovelace');
    expect(await frame.locator('h1').textContent()).toBe('Feature requests');
    // No token in the URL the frame ends on.
    expect(frame.url()).toBe(`${app.origin}/board`);

    await expect
      .poll(() => hostEvents(page))
      .toContainEqual({
        type: 'ready',
        detail: { sessionId, boardId: 'board_reference_app', height: expect.any(Number) },
      });
    // The board grows: its script reports the new height, and the host page's frame follows it.
    // (The page's CSP allows no inline style attribute; the CSSOM is script, which it allows.)
    await frame.evaluate(() => {
      type Element = { style: { height: string }; textContent: string };
      const doc = (
        globalThis as unknown as {
          document: { createElement(tag: string): Element; body: { append(e: Element): void } };
        }
      ).document;
      const more = doc.createElement('div');
      more.style.height = '600px';
      more.textContent = 'more posts';
      doc.body.append(more);
    });
    await expect
      .poll(async () => (await hostEvents(page)).some((e) => e.type === 'resize' && (e.height ?? 0) > 600))
      .toBe(true);
    // A second frame of the app's own origin (the board again, with the same partitioned cookie) says
    // `ready` too; the host script hears the mounted frame only.
    await page.evaluate((src) => {
      const doc = (
        globalThis as unknown as { document: { body: { insertAdjacentHTML(p: string, h: string): void } } }
      ).document;
      doc.body.insertAdjacentHTML('beforeend', `<iframe id="second" title="second" src="${src}"></iframe>`);
    }, `${app.origin}/board`);
    await page.frameLocator('#second').locator('#user-name').waitFor();
    // Both strangers' messages reached the page: the mounted frame's, the second frame's, the forger's.
    const readyFrom = () => page.evaluate(() => (globalThis as unknown as HostWindow).readyMessages);
    await expect.poll(async () => (await readyFrom()).filter((o) => o === app.origin).length).toBe(2);
    await expect.poll(async () => (await readyFrom()).includes(site.origin)).toBe(true);
    const events = await hostEvents(page);
    expect(events.filter((e) => e.type === 'ready')).toHaveLength(1);
    expect(events.some((e) => e.detail?.sessionId === 'forged' || e.height === 999)).toBe(false);

    // Its own session works in the frame: a vote counts, through the partitioned cookie.
    await frame.locator('li[data-post="sso"] button').click();
    const after = await appFrame(page);
    await expect.poll(() => after.locator('li[data-post="sso"] .count').textContent()).toBe('1 vote');
  });

  it('renews a session through fetchEmbedUrl before it ends: the application’s new board takes the frame’s place, one ready', async () => {
    // Long enough that its real end never comes while the test runs: the page's clock is moved instead.
    const lifetimeSeconds = 60;
    const { embedUrl, sessionId } = await embedUrlFor('customer-renewing', {
      expiresInSeconds: lifetimeSeconds,
    });
    backend.asked = 0;
    backend.urls = [];
    const page = await open(
      hostPage(`<script src="${runtime.baseUrl}/embed.js?v=${HOST_SCRIPT_VERSION}"></script>
<div id="board"></div>
<script>
window.embedEvents = [];
window.readyMessages = [];
window.appReady = [];
addEventListener('message', (event) => {
  if (!event.data || event.data.type !== 'ready') return;
  readyMessages.push(event.origin);
  appReady.push(event.data);
});
const options = ${recordingMountOptions(embedUrl)};
options.fetchEmbedUrl = () => fetch('/embed-url', { method: 'POST' }).then((answer) => answer.json()).then((body) => body.embedUrl);
window.handle = EmbedSession.mount('#board', options);
</script>`),
      { clock: true },
    );
    await appFrame(page);
    await expect.poll(() => hostEvents(page)).toContainEqual(expect.objectContaining({ type: 'ready' }));
    // The application gave its page the time left, which the host script heard with ready.
    const [first] = await page.evaluate(
      () => (globalThis as unknown as { appReady: Array<{ expiresInMs?: number }> }).appReady,
    );
    expect(first?.expiresInMs).toBeGreaterThan((lifetimeSeconds - 5) * 1000);
    expect(first?.expiresInMs).toBeLessThanOrEqual(lifetimeSeconds * 1000);
    // Three quarters of the session on: its renewal is due (a third left), and it has not ended.
    await page.clock.fastForward((3 / 4) * lifetimeSeconds * 1000);

    const shown = () =>
      page.evaluate(() => {
        const w = globalThis as unknown as {
          handle: { iframe: { src: string } };
          document: { querySelectorAll(s: string): unknown[] };
        };
        return { src: w.handle.iframe.src, frames: w.document.querySelectorAll('#board iframe').length };
      });
    await expect
      .poll(async () => (await shown()).src === backend.urls[0] && (await shown()).frames === 1, {
        // Polled: the renewal's work (the backend, the hand-off, the new board loading) is real.
        timeout: 10_000,
      })
      .toBe(true);
    await expect.poll(() => page.frames().filter((f) => f.url() === `${app.origin}/board`).length).toBe(1);
    expect(await page.frameLocator('#board iframe').locator('#user-name').textContent()).toBe('Ada Lovelace');
    expect(backend.asked).toBe(1);
    expect(await readyFrom(page)).toBeGreaterThanOrEqual(2);
    const events = await hostEvents(page);
    expect(events.filter((e) => e.type === 'ready')).toEqual([
      { type: 'ready', detail: expect.objectContaining({ sessionId }) },
    ]);
    expect(events.filter((e) => e.type !== 'ready' && e.type !== 'resize')).toEqual([]);
  });

  it('refuses a replayed and a tampered token with a clear page', async () => {
    const { embedUrl } = await embedUrlFor('customer-browser-2');
    const page = await browser().newPage();
    opened.push(page);
    const posted = new Promise<string>((resolve) =>
      page.on('request', (request) => {
        if (request.url() === app.appUrl && request.method() === 'POST') resolve(request.postData() ?? '');
      }),
    );
    await page.goto(hostPage(mountedPage(embedUrl)));
    await appFrame(page);
    const idToken = new URLSearchParams(await posted).get('id_token') as string;
    expect(idToken).toMatch(/^ey/);

    /** A page of the customer's site that posts `token` to the app as the embed page does. */
    const resubmit = async (token: string) => {
      const attacker = await browser().newPage();
      opened.push(attacker);
      const answer = attacker.waitForResponse((r) => r.url() === app.appUrl);
      await attacker.goto(
        hostPage(`<form method="post" action="${app.appUrl}"><input type="hidden" name="id_token" value="${token}"></form>
<script>document.forms[0].submit()</script>`),
      );
      const status = (await answer).status();
      await attacker.waitForURL(app.appUrl);
      return { status, text: await attacker.locator('main').textContent() };
    };

    const replay = await resubmit(idToken);
    expect(replay.status).toBe(401);
    expect(replay.text).toContain('The sign-in link was used already.');

    const [header, payload, signature] = idToken.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    claims.given_name = 'Mallory';
    const tampered = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    const refused = await resubmit(tampered);
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('The sign-in link is not valid.');
  });

  describe('the session’s end reaches the open frame', () => {
    const contexts: BrowserContext[] = [];
    afterEach(async () => {
      for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
    });

    /**
     * A customer's page mounting `embedUrl`, in a browser context whose clock is `offsetMs` off the real
     * one; every host callback is also reported to the test at once, stamped with the test's own clock.
     */
    async function openWithClockOff(embedUrl: string, offsetMs: number) {
      const context = await browser().newContext({ viewport: { width: 900, height: 900 } });
      contexts.push(context);
      await context.clock.install({ time: Date.now() + offsetMs });
      const heard: Array<{ type: string; at: number }> = [];
      await context.exposeBinding('hostHeard', (_source, type: string) => {
        heard.push({ type, at: Date.now() });
      });
      const page = await context.newPage();
      await page.goto(
        hostPage(`<script src="${runtime.baseUrl}/embed.js?v=${HOST_SCRIPT_VERSION}"></script>
<div id="board"></div>
<script>
window.embedEvents = [];
const heard = (type, detail) => {
  embedEvents.push(detail === undefined ? { type } : { type, detail });
  hostHeard(type);
};
EmbedSession.mount('#board', {
  url: ${JSON.stringify(embedUrl)},
  onReady: (detail) => heard('ready', detail),
  onExpired: () => heard('expired'),
  onRevoked: () => heard('revoked'),
  onError: (detail) => heard('error', detail),
});
</script>`),
      );
      return { page, heard };
    }

    /** The frame of `page` on the service's ended view, once it is there. */
    async function endedFrame(page: Page) {
      const onEnded = () => page.frames().find((f) => f.url().startsWith(`${runtime.baseUrl}/embed/ended?`));
      await expect.poll(() => onEnded() !== undefined, { timeout: 10_000 }).toBe(true);
      return onEnded() as NonNullable<ReturnType<typeof onEnded>>;
    }

    it('a short session expires while open: the expired view in its language and theme, onExpired within 2 s, the browser’s clock minutes off', async () => {
      const { embedUrl, expiresAt } = await embedUrlFor('customer-expiring', { expiresInSeconds: 4 });
      // The browser's clock is seven minutes ahead: a page that trusted it would end at once.
      const { page, heard } = await openWithClockOff(`${embedUrl}&locale=de&theme=dark`, 7 * 60_000);
      const frame = await appFrame(page);
      expect(Math.abs((await frame.evaluate(() => Date.now())) - Date.now() - 7 * 60_000)).toBeLessThan(
        5_000,
      );
      await expect.poll(() => heard.map((h) => h.type)).toContain('ready');
      expect(heard.map((h) => h.type)).not.toContain('expired');

      await expect.poll(() => heard.map((h) => h.type), { timeout: 10_000 }).toContain('expired');
      const expiredAt = heard.find((h) => h.type === 'expired')?.at as number;
      expect(Math.abs(expiredAt - Date.parse(expiresAt))).toBeLessThanOrEqual(2_000);

      const ended = await endedFrame(page);
      expect(new URL(ended.url()).searchParams.get('reason')).toBe('expired');
      await expect
        .poll(() => ended.getByTestId('embed-ended').innerText())
        .toContain('Ihr Zugang zu diesem Board ist abgelaufen.');
      expect(await ended.locator('html').getAttribute('data-theme')).toBe('dark');
      // The board script and the ended view both said it; the host heard it once.
      await page.waitForTimeout(300);
      expect(heard.filter((h) => h.type === 'expired')).toHaveLength(1);
      expect(heard.map((h) => h.type)).not.toContain('error');
    });

    it('a revoke while open: onRevoked within 5 s of the answer, and the app answers no content afterwards', async () => {
      const { embedUrl, sessionId } = await embedUrlFor('customer-revoked');
      const { page, heard } = await openWithClockOff(`${embedUrl}&locale=fr&theme=light`, -3 * 60_000);
      await appFrame(page);
      await expect.poll(() => heard.map((h) => h.type)).toContain('ready');

      const answer = await apiCall(
        runtime,
        runtime.demo?.apiKey as string,
        'POST',
        `/api/embed/sessions/${sessionId}/revoke`,
      );
      expect(answer.status).toBe(200);
      const answeredAt = Date.now();
      await expect.poll(() => heard.map((h) => h.type), { timeout: 6_000 }).toContain('revoked');
      expect((heard.find((h) => h.type === 'revoked')?.at as number) - answeredAt).toBeLessThanOrEqual(5_000);

      const ended = await endedFrame(page);
      await expect
        .poll(() => ended.getByTestId('embed-ended').innerText())
        .toContain('Votre accès à ce tableau a été retiré.');
      // The app's own page, asked again with the session's cookie in this site's partition, shows no board.
      await page.evaluate((src) => {
        const doc = (
          globalThis as unknown as { document: { body: { insertAdjacentHTML(p: string, h: string): void } } }
        ).document;
        doc.body.insertAdjacentHTML('beforeend', `<iframe id="again" title="again" src="${src}"></iframe>`);
      }, `${app.origin}/board`);
      const again = page.frameLocator('#again');
      await expect.poll(() => again.getByTestId('embed-ended').count()).toBe(1);
      expect(await again.locator('#user-name').count()).toBe(0);
    });

    /** Each revocation that ends sessions in bulk: a revoke-all of each scope, and an operator's stage cut-off. */
    const BULK_REVOCATIONS = [
      ['a revoke-all of the user', (userId: string) => ({ userId })],
      [
        'a revoke-all of the user on the board',
        (userId: string) => ({ userId, boardId: 'board_reference_app' }),
      ],
      ['a revoke-all of the board', () => ({ boardId: 'board_reference_app' })],
      ['the stage cut-off of an operator', () => undefined],
    ] as const;

    it.each(BULK_REVOCATIONS)(
      '%s while open: onRevoked within 5 s of the answer, and the app answers no content afterwards',
      async (_name, selection) => {
        const userId = `customer-bulk-${randomUUID().slice(0, 8)}`;
        const { embedUrl } = await embedUrlFor(userId);
        const { page, heard } = await openWithClockOff(`${embedUrl}&locale=es`, 5 * 60_000);
        await appFrame(page);
        await expect.poll(() => heard.map((h) => h.type)).toContain('ready');

        const body = selection(userId);
        if (body) {
          const answer = await apiCall(
            runtime,
            runtime.demo?.apiKey as string,
            'POST',
            '/api/embed/sessions/revoke',
            body,
          );
          expect(answer.status).toBe(200);
        } else {
          // The operator's stage cut-off, as `npm run admin -- revoke-all-sessions --before <now>` writes it.
          const out: string[] = [];
          const code = await adminMain(
            ['revoke-all-sessions', '--before', new Date().toISOString()],
            { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint },
            { out: (text) => out.push(text), err: (text) => out.push(text) },
          );
          expect(code, out.join('')).toBe(0);
        }
        const answeredAt = Date.now();
        await expect.poll(() => heard.map((h) => h.type), { timeout: 6_000 }).toContain('revoked');
        expect((heard.find((h) => h.type === 'revoked')?.at as number) - answeredAt).toBeLessThanOrEqual(
          5_000,
        );
        const ended = await endedFrame(page);
        await expect
          .poll(() => ended.getByTestId('embed-ended').innerText())
          .toContain(TEXTS.es.notices.session_revoked.sentence);
        // The app's own page, asked again in this site's partition, shows no board.
        await page.evaluate((src) => {
          const doc = (
            globalThis as unknown as {
              document: { body: { insertAdjacentHTML(p: string, h: string): void } };
            }
          ).document;
          doc.body.insertAdjacentHTML('beforeend', `<iframe id="again" title="again" src="${src}"></iframe>`);
        }, `${app.origin}/board`);
        const again = page.frameLocator('#again');
        await expect.poll(() => again.getByTestId('embed-ended').count()).toBe(1);
        expect(await again.locator('#user-name').count()).toBe(0);
      },
    );

    it('says ready once per mount across several pages of the application', async () => {
      const { embedUrl, sessionId } = await embedUrlFor('customer-clicking');
      const page = await open(hostPage(mountedPage(embedUrl)));
      for (const post of ['sso', 'csv-export', 'dark-mode']) {
        const frame = await appFrame(page);
        const before = await readyFrom(page);
        await frame.locator(`li[data-post="${post}"] button`).click();
        // Each vote loads the board again, which says ready again.
        await expect.poll(() => readyFrom(page)).toBeGreaterThan(before);
      }
      const frame = await appFrame(page);
      await expect
        .poll(() => frame.locator('li[data-post="dark-mode"] button').getAttribute('aria-pressed'))
        .toBe('true');
      expect(await readyFrom(page)).toBeGreaterThanOrEqual(4);
      const ready = (await hostEvents(page)).filter((e) => e.type === 'ready');
      expect(ready).toEqual([{ type: 'ready', detail: expect.objectContaining({ sessionId }) }]);
    });
  });
});
