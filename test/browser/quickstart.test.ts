import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeInChromium, useChromium } from '#test/support/browser';
import { childEnv } from '#test/support/child-env';
import { isAlive } from '#test/support/npm-start';
import {
  type BackgroundCommand,
  DOCUMENTED,
  isForeground,
  QUICKSTART,
  QuickstartShell,
  stepsOf,
} from '#test/support/quickstart';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { type RunningBoardApp, startBoardApp } from '../../examples/board-app/server';

/**
 * The five-minute path, followed as docs/quickstart.md writes it, up to what the end user sees: the
 * service's local runtime and the reference board application (what `npm start` runs), then the page's
 * blocks in one shell (the board with the reference app's URL, a fresh API key, a session, the example
 * host page started with that key), then the host page in Chromium. It ends on the board, drawn by the
 * reference application in the frame, showing the signed-in user's name.
 */
const runtime = useTestRuntime();
const browser = useChromium();
let app: RunningBoardApp;
let shell: QuickstartShell;
let hostPage: BackgroundCommand;
let hostPageUrl: string;

/** The page's text with the addresses of what this test started in place of the default ones. */
const local = (text: string) =>
  text
    .replaceAll(DOCUMENTED.api, runtime.baseUrl)
    .replaceAll(DOCUMENTED.dynamodb, runtime.dynamoEndpoint)
    .replaceAll(DOCUMENTED.boardApp, app.origin);

describeInChromium('the quickstart, followed in a browser', () => {
  beforeAll(async () => {
    app = await startBoardApp({ port: 0 });
    app.serve({ issuer: runtime.baseUrl });
    shell = new QuickstartShell(childEnv({ HOST_PAGE_PORT: '0' }));
    const [, ...tasks] = stepsOf(QUICKSTART);
    const upToHostPage = tasks.slice(0, tasks.findIndex(isForeground) + 1);
    expect(upToHostPage.at(-1), 'the quickstart starts the example host page').toSatisfy(isForeground);
    for (const task of upToHostPage.slice(0, -1)) await shell.run(local(task.command));
    hostPage = await shell.runInBackground(local((upToHostPage.at(-1) as { command: string }).command));
    await vi.waitFor(
      () => {
        if (!isAlive(hostPage.pid)) throw new Error(`the host page stopped:\n${hostPage.output()}`);
        const url = /Open in a browser\s+(http\S+)/.exec(hostPage.output())?.[1];
        if (!url) throw new Error('no banner yet');
        hostPageUrl = url;
      },
      { timeout: 60_000, interval: 50 },
    );
  }, 120_000);

  afterAll(async () => {
    shell?.close();
    await app?.close();
  });

  it("opens the host page and ends on the board, drawn by the reference application, showing the user's name", async () => {
    const page: Page = await browser().newPage({ viewport: { width: 1000, height: 800 } });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(hostPageUrl);

    const board = page.frameLocator('#board iframe');
    // The embed page hands the frame to the application, which draws the board as the signed-in user.
    await board.locator('#user-name').waitFor({ timeout: 15_000 });
    expect(await board.locator('#user-name').textContent()).toBe('Ada Lovelace');
    expect(await board.locator('h1').textContent()).toBe('Roadmap');
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    expect(new URL(frame?.url() ?? '').origin).toBe(app.origin);
    // The host script sized the frame to the board; the strict CSP of the host page refused nothing.
    await expect
      .poll(async () => (await page.locator('#board iframe').boundingBox())?.height)
      .toBeGreaterThan(150);
    expect(problems).toEqual([]);
    // The key stays with the host page's backend: the page holds only the session's embedUrl.
    const html = await page.content();
    expect(html).not.toMatch(/esk_/);
    expect(await page.locator('#board').getAttribute('data-embed-url')).toMatch(
      new RegExp(`^${runtime.baseUrl.replace(/[.]/g, '\\.')}/embed\\?token=[A-Za-z0-9_-]{32}$`),
    );
    expect(hostPage.output()).toMatch(/session \S+ for customer-42 on board roadmap/);
    await page.close();
  });
});
