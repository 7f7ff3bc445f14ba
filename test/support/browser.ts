import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';
import { type Listening, listenOnFreePort } from './listen';
import { usePerFile } from './per-file';

/** Debian's Chromium (never a downloaded browser), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why browser tests cannot run here; undefined when Chromium is installed. */
export const browserSkipReason = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (install Debian's chromium or set CHROMIUM_PATH)`;

/**
 * A suite that needs Chromium: where it is absent, the suite is skipped and the reason printed. Its hooks
 * do not run then, nor those of a file whose tests are all in such suites (the runtime's, the browser's).
 */
export function describeInChromium(name: string, body: () => void): void {
  if (browserSkipReason) console.warn(`[browser tests skipped] ${browserSkipReason}`);
  describe.skipIf(browserSkipReason !== undefined)(name, body);
}

/**
 * Headless Chromium with the flags this sandbox needs: no sandbox (root), and no background networking,
 * whose connections the closed network refuses.
 */
function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

/**
 * Chromium for the tests of a file or suite, all of them in `describeInChromium`: launched before them,
 * closed after them. The function returned hands the browser to the tests.
 */
export function useChromium(): () => Browser {
  return usePerFile('the browser', launchChromium, (browser) => browser.close());
}

/**
 * The options of `EmbedSession.mount` for `embedUrl`, as page script: every callback pushes what it got
 * to `window.embedEvents` (which the page creates), for the test to read.
 */
export function recordingMountOptions(embedUrl: string): string {
  return `{
  url: ${JSON.stringify(embedUrl)},
  onReady: (detail) => embedEvents.push({ type: 'ready', detail }),
  onResize: (height) => embedEvents.push({ type: 'resize', height }),
  onExpired: () => embedEvents.push({ type: 'expired' }),
  onRevoked: () => embedEvents.push({ type: 'revoked' }),
  onError: (detail) => embedEvents.push({ type: 'error', detail }),
}`;
}

/** A customer's site: pages on `http://localhost:{port}`, another site than the service on 127.0.0.1. */
export interface CustomerSite {
  /** The site's origin, once it has started. */
  readonly origin: string;
  /** Serves `body` as a page of the site; returns its URL. */
  page(body: string): string;
}

export interface CustomerSiteOptions {
  /** Answers the requests it takes (returning true): the site's own backend, its images. */
  route?: (request: IncomingMessage, response: ServerResponse) => boolean;
  /** The HTML document around a page's body. */
  document?: (body: string) => string;
}

/**
 * A customer's site for the tests of a file or suite, all of them in `describeInChromium`: started before
 * them, closed after them.
 */
export function useCustomerSite(options: CustomerSiteOptions = {}): CustomerSite {
  const document = options.document ?? ((body: string) => `<!doctype html><body>${body}</body>`);
  const pages = new Map<string, string>();
  let server: Listening | undefined;
  let origin: string | undefined;
  beforeAll(async () => {
    const site = createServer((request, response) => {
      if (options.route?.(request, response)) return;
      const body = pages.get(request.url?.slice(1) ?? '');
      if (body === undefined) return void response.writeHead(404).end();
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(document(body));
    });
    server = await listenOnFreePort(site);
    // "localhost" and "127.0.0.1" are different sites: the customer's pages are cross-site to the embed.
    origin = `http://localhost:${server.port}`;
  });
  afterAll(async () => {
    await server?.close();
    server = undefined;
  });
  return {
    get origin() {
      if (!origin) throw new Error('the customer site is used outside its tests (before beforeAll)');
      return origin;
    },
    page(body: string) {
      const id = randomBytes(6).toString('hex');
      pages.set(id, body);
      return `${this.origin}/${id}`;
    },
  };
}
