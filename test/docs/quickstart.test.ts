import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { childEnv } from '#test/support/child-env';
import { isAlive, killNpmStarts, type NpmStart, startNpmStart } from '#test/support/npm-start';
import {
  DOCUMENTED,
  isForeground,
  QUICKSTART,
  QuickstartShell,
  quickstartHtml,
  shownPattern,
  stepsOf,
} from '#test/support/quickstart';

/**
 * docs/quickstart.md is run as a newcomer runs it: `npm start`, then every shell block in order in one
 * shell (so the variables one block sets reach the next), with the service's own ports in place of the
 * default ones the page names. What a block prints must be what the page shows after it. The block that
 * starts the example host page stays in the foreground until Ctrl-C, as the page says: it runs in the
 * background here, is asked for its page, then gets the Ctrl-C before the next block.
 */
const ROOT = join(import.meta.dirname, '../..');

let service: NpmStart;
let shell: QuickstartShell;
const steps = stepsOf(QUICKSTART);
const [start, ...tasks] = steps;
/** What each task's block printed, in order. */
const printed: string[] = [];
/** The host page's address, as its banner gives it. */
let hostPageUrl: string = DOCUMENTED.hostPage;
/** The host page's answer to `GET /` while it ran, and how its process ended on Ctrl-C. */
let hostPage: { status: number; headers: Headers; html: string; aliveAfterCtrlC: boolean };

/** The page's text with the service's own addresses in place of the default ones. */
const local = (text: string) =>
  text
    .replaceAll(DOCUMENTED.api, service.baseUrl)
    .replaceAll(DOCUMENTED.dynamodb, service.dynamoEndpoint)
    .replaceAll(DOCUMENTED.boardApp, service.boardAppOrigin)
    .replaceAll(DOCUMENTED.hostPage, hostPageUrl.replace(/\/$/, ''));

/** Starts a foreground block in the background, waits for its banner, asks for its page, then Ctrl-C. */
async function runForeground(command: string, shown: string | undefined): Promise<string> {
  const running = await shell.runInBackground(local(command));
  const lastLine = shown?.trim().split('\n').at(-1) ?? '';
  await vi.waitFor(
    () => {
      if (!isAlive(running.pid)) throw new Error(`the host page stopped:\n${running.output()}`);
      if (!running.output().includes(lastLine)) throw new Error('no banner yet');
    },
    { timeout: 60_000, interval: 50 },
  );
  const banner = running.output();
  hostPageUrl = /Open in a browser\s+(http\S+)/.exec(banner)?.[1] ?? hostPageUrl;
  const response = await fetch(hostPageUrl);
  hostPage = {
    status: response.status,
    headers: response.headers,
    html: await response.text(),
    aliveAfterCtrlC: true,
  };
  process.kill(running.pid, 'SIGINT');
  await vi
    .waitFor(
      () => {
        if (isAlive(running.pid)) throw new Error('the host page is still running after Ctrl-C');
      },
      { timeout: 10_000, interval: 50 },
    )
    .catch(() => undefined);
  hostPage.aliveAfterCtrlC = isAlive(running.pid);
  return banner;
}

beforeAll(async () => {
  service = await startNpmStart();
  // The host page on a free port, as `npm start` runs on free ports here (HOST_PAGE_PORT=0).
  shell = new QuickstartShell(childEnv({ HOST_PAGE_PORT: '0' }));
  for (const task of tasks) {
    printed.push(
      isForeground(task)
        ? await runForeground(task.command, task.shown)
        : await shell.run(local(task.command)),
    );
  }
}, 180_000);
afterAll(() => {
  shell?.close();
  killNpmStarts();
});

describe('docs/quickstart.md, run as written', () => {
  it('starts the service with `npm install && npm start`, which the test runs as the first step', () => {
    expect(start?.command).toBe('npm install && npm start\n');
    expect(service.output()).toContain(`API base URL       ${service.baseUrl}`);
  });

  it('runs every task block in one shell without a failing command', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(5);
    expect(printed).toHaveLength(tasks.length);
  });

  it('creates a board drawn by the reference application npm start runs, a membership, and a key it never prints', () => {
    const [created] = printed;
    expect(
      created
        ?.trim()
        .split(/\n(?=\{)/)
        .map((document) => JSON.parse(document)),
    ).toEqual([
      {
        boardId: 'roadmap',
        orgId: 'acme',
        visibility: 'PRIVATE',
        name: 'Roadmap',
        appUrl: `${service.boardAppOrigin}/handoff`,
        // Who made the change: the CLI and the user running it.
        updatedBy: expect.stringMatching(/^cli:./),
        updatedAt: expect.any(String),
      },
      expect.objectContaining({ orgId: 'acme', userId: 'acme-backend' }),
    ]);
    expect(created).not.toMatch(/esk_/);
  });

  it.each(tasks.flatMap((task, index) => (task.shown ? [[index + 1, task.shown, index] as const] : [])))(
    'prints what the page shows after task block %i',
    (_number, shown, index) => {
      expect(printed[index]).toMatch(shownPattern(local(shown)));
    },
  );

  it('shows an active session, a link that opens the board, the host page running, then the revoked session and its refused link', () => {
    expect(tasks.map((task) => task.shown?.trim().split('\n').at(-1))).toEqual([
      undefined,
      `${DOCUMENTED.api}/embed?token=…`,
      '200',
      'Each page view creates a session with your API key, which stays in this process. Ctrl-C stops it.',
      '401',
    ]);
  });

  it("starts the host page of step 3 with the key of step 1, which serves the page with a session's embedUrl and never the key", () => {
    expect(tasks.filter(isForeground)).toHaveLength(1);
    expect(hostPage.status).toBe(200);
    expect(hostPage.html).toMatch(
      new RegExp(
        `data-embed-url="${service.baseUrl.replace(/[.]/g, '\\.')}/embed\\?token=[A-Za-z0-9_-]{32}"`,
      ),
    );
    expect(hostPage.html).not.toMatch(/esk_/);
    expect(hostPage.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('stops the host page on Ctrl-C, so step 4 goes on in the same terminal', () => {
    expect(hostPage.aliveAfterCtrlC).toBe(false);
  });

  it("shows in step 3 exactly the snippet of the example's page", () => {
    const page = readFileSync(join(ROOT, 'examples/host-page/page.html'), 'utf8');
    const snippet = quickstartHtml()
      .replace(`${DOCUMENTED.api}/embed.js`, '{{apiBaseUrl}}/embed.js')
      .replace(/data-embed-url="[^"]*"/, 'data-embed-url="{{embedUrl}}"');
    expect(page).toContain(snippet);
  });
});

describe('the quickstart checker', () => {
  it('pairs each shell block with the output block right after it, and only that one', () => {
    const page = '```sh\na\n```\n\n```text\n1\n```\n\n```sh\nb\n```\nprose\n```text\nnot b\n```\n';
    expect(stepsOf(page)).toEqual([{ command: 'a\n', shown: '1\n' }, { command: 'b\n' }]);
  });

  it('lets … in a shown output stand for one generated value, not for several lines', () => {
    expect('x?token=abc_D-9\n').toMatch(shownPattern('x?token=…\n'));
    expect('x?token=abc\nmore\n').not.toMatch(shownPattern('x?token=…\n'));
  });
});
