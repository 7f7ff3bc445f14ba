import { createContext, Script } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BOARD_SCRIPT,
  boardScriptResponse,
  ENDED_VIEW_RELATIVE,
  WATCH_INTERVAL_MS,
} from '#lib/adapters/http/embed/board-script';
import { ENDED_VIEW_PATH } from '#lib/adapters/http/embed/ended';
import { MESSAGE_SOURCE } from '#lib/adapters/http/embed/frame-script';

const SCRIPT_SRC = 'https://api.example.com/prod/embed-board.js';

interface PageOptions {
  framed?: boolean;
  /** The script's own URL; null when the page cannot tell it (no currentScript). */
  src?: string | null;
  /** What the application's watch endpoint answers, in order (the last one from then on). */
  watch?: Array<{ ok: boolean; body?: unknown } | 'network error'>;
}

interface BoardApi {
  ready(options?: unknown): void;
  ended(reason?: unknown): void;
  expired(): void;
  revoked(): void;
  error(code?: unknown): void;
}

/**
 * A board application's page with BOARD_SCRIPT loaded, in a bare context: what it posts to its parent,
 * where it sends the frame, what it asks the watch endpoint, and the tab's visibility.
 */
function boardPage(options: PageOptions = {}) {
  const posted: [unknown, string][] = [];
  const navigations: string[] = [];
  const fetched: Array<[string, unknown]> = [];
  const observers: (() => void)[] = [];
  const listeners: Record<string, Array<() => void>> = {};
  const answers = [...(options.watch ?? [{ ok: true, body: { active: true } }])];
  const body = { height: 300, getBoundingClientRect: () => ({ height: body.height }) };
  const document = {
    body,
    visibilityState: 'visible',
    currentScript: options.src === null ? null : { src: options.src ?? SCRIPT_SRC },
    addEventListener: (type: string, listener: () => void) => {
      listeners[type] = [...(listeners[type] ?? []), listener];
    },
    removeEventListener: (type: string, listener: () => void) => {
      listeners[type] = (listeners[type] ?? []).filter((l) => l !== listener);
    },
  };
  const sandbox: Record<string, unknown> = {
    document,
    URL,
    Date,
    setTimeout,
    clearTimeout,
    location: { replace: (url: string) => navigations.push(url) },
    fetch: (url: string, init: unknown) => {
      fetched.push([url, init]);
      const answer = answers.length > 1 ? answers.shift() : answers[0];
      if (answer === 'network error' || answer === undefined) return Promise.reject(new TypeError('offline'));
      return Promise.resolve({ ok: answer.ok, json: () => Promise.resolve(answer.body) });
    },
    ResizeObserver: class {
      constructor(private readonly callback: () => void) {}
      observe() {
        observers.push(this.callback);
      }
    },
  };
  sandbox.window = sandbox;
  sandbox.parent =
    options.framed === false
      ? sandbox
      : { postMessage: (data: unknown, target: string) => posted.push([data, target]) };
  new Script(BOARD_SCRIPT).runInContext(createContext(sandbox));
  return {
    api: sandbox.EmbedBoard as BoardApi,
    posted,
    types: () => posted.map(([data]) => (data as { type: string }).type),
    navigations,
    fetched,
    body,
    resized: () => {
      for (const callback of observers) callback();
    },
    /** The tab becomes hidden or visible, as the browser tells the page. */
    visibility: (state: 'hidden' | 'visible') => {
      document.visibilityState = state;
      for (const listener of listeners.visibilitychange ?? []) listener();
    },
    listenerCount: (type: string) => (listeners[type] ?? []).length,
  };
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the board application script: ready and resize', () => {
  it('posts ready with the ids and the height in the embed page’s envelope, then each new height', () => {
    const page = boardPage();
    page.api.ready({ sessionId: 's-1', boardId: 'b-1', email: 'never@example.com' });
    page.body.height = 480;
    page.resized();
    page.resized();
    expect(page.posted).toEqual([
      [{ source: MESSAGE_SOURCE, type: 'ready', sessionId: 's-1', boardId: 'b-1', height: 300 }, '*'],
      [{ source: MESSAGE_SOURCE, type: 'resize', sessionId: 's-1', boardId: 'b-1', height: 480 }, '*'],
    ]);
  });

  it('tells the host the time the session has left with ready, from the application’s expiresIn', () => {
    const page = boardPage();
    vi.setSystemTime(new Date('1999-01-01T00:00:00.000Z'));
    page.api.ready({ sessionId: 's-1', boardId: 'b-1', expiresIn: 1187.4 });
    expect(page.posted[0]?.[0]).toEqual({
      source: MESSAGE_SOURCE,
      type: 'ready',
      sessionId: 's-1',
      boardId: 'b-1',
      height: 300,
      expiresInMs: 1_187_400,
    });
    const other = boardPage();
    other.api.ready({ sessionId: 's-1', expiresIn: 'soon' });
    expect(other.posted[0]?.[0]).not.toHaveProperty('expiresInMs');
    const over = boardPage();
    over.api.ready({ sessionId: 's-1', expiresIn: -3 });
    expect(over.posted[0]?.[0]).toMatchObject({ type: 'ready', expiresInMs: 0 });
  });

  it('error(code) tells the host why the application shows no board, in the embed page’s codes', () => {
    const page = boardPage();
    page.api.error('invalid_token');
    page.api.error('unavailable');
    page.api.error('token_replayed');
    page.api.error(undefined);
    expect(page.posted.map(([data]) => data)).toEqual([
      { source: MESSAGE_SOURCE, type: 'error', code: 'invalid_token', height: 300 },
      { source: MESSAGE_SOURCE, type: 'error', code: 'unavailable', height: 300 },
      { source: MESSAGE_SOURCE, type: 'error', code: 'internal', height: 300 },
      { source: MESSAGE_SOURCE, type: 'error', code: 'internal', height: 300 },
    ]);
    expect(page.navigations).toEqual([]);
  });

  it('posts expired and revoked, and only posts them', () => {
    const page = boardPage();
    page.api.expired();
    page.api.revoked();
    expect(page.types()).toEqual(['expired', 'revoked']);
    expect(page.navigations).toEqual([]);
  });

  it('without expiresIn or watch, ends nothing on its own', async () => {
    const page = boardPage();
    page.api.ready({ sessionId: 's-1' });
    await vi.advanceTimersByTimeAsync(365 * 24 * 3_600_000);
    expect(page.types()).toEqual(['ready']);
    expect(page.fetched).toEqual([]);
  });
});

describe('the board application script: the session’s end', () => {
  const look = { sessionId: 's-1', boardId: 'b-1', locale: 'de', theme: 'dark' };

  it('ends the page when the remaining time has passed: posts expired and sends the frame to the ended view', () => {
    const page = boardPage();
    page.api.ready({ ...look, expiresIn: 90 });
    vi.advanceTimersByTime(89_999);
    expect(page.types()).toEqual(['ready']);
    expect(page.navigations).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(page.posted[1]).toEqual([
      { source: MESSAGE_SOURCE, type: 'expired', sessionId: 's-1', boardId: 'b-1' },
      '*',
    ]);
    expect(page.navigations).toEqual([
      'https://api.example.com/prod/embed/ended?reason=expired&locale=de&theme=dark',
    ]);
    vi.advanceTimersByTime(3_600_000);
    expect(page.types()).toEqual(['ready', 'expired']);
    expect(page.navigations).toHaveLength(1);
  });

  it('counts the remaining time from the page’s load, whatever the browser’s clock says', () => {
    // The browser's clock is days ahead of the service's: only the 30 s the server gave count.
    vi.setSystemTime(new Date('2026-01-05T00:00:00.000Z'));
    const page = boardPage();
    page.api.ready({ ...look, expiresIn: 30 });
    vi.advanceTimersByTime(29_000);
    expect(page.types()).toEqual(['ready']);
    vi.advanceTimersByTime(1_000);
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('notices a passed end as soon as a sleeping tab becomes visible again', () => {
    const page = boardPage();
    page.api.ready({ ...look, expiresIn: 600 });
    // The laptop slept: the clock moved on, the timer did not fire.
    vi.setSystemTime(Date.now() + 600_000);
    page.visibility('visible');
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('ends at once when the session has no time left', () => {
    const page = boardPage();
    page.api.ready({ ...look, expiresIn: 0 });
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('sends the frame to the ended view next to its own URL, with only the parameters it was given', () => {
    const page = boardPage({ src: 'https://embed.example.com/embed-board.js?cache=1' });
    page.api.ready({ sessionId: 's-1', expiresIn: 1 });
    vi.advanceTimersByTime(1000);
    expect(page.navigations).toEqual(['https://embed.example.com/embed/ended?reason=expired']);
    expect(`/${ENDED_VIEW_RELATIVE}`).toBe(ENDED_VIEW_PATH);
  });

  it('ended(reason) posts revoked or expired once and goes to that view; any other reason to the neutral one', () => {
    const revoked = boardPage();
    revoked.api.ready(look);
    revoked.api.ended('revoked');
    revoked.api.ended('expired');
    expect(revoked.types()).toEqual(['ready', 'revoked']);
    expect(revoked.navigations).toEqual([
      'https://api.example.com/prod/embed/ended?reason=revoked&locale=de&theme=dark',
    ]);

    const other = boardPage();
    other.api.ready(look);
    other.api.ended('deleted');
    expect(other.types()).toEqual(['ready']);
    expect(other.navigations).toEqual(['https://api.example.com/prod/embed/ended?locale=de&theme=dark']);
  });

  it('still posts the end when it cannot tell where the service is', () => {
    const page = boardPage({ src: null });
    page.api.ended('revoked');
    expect(page.types()).toEqual(['revoked']);
    expect(page.navigations).toEqual([]);
  });

  it('navigates, and posts nothing, when the page is not in a frame', () => {
    const page = boardPage({ framed: false });
    page.api.ready({ ...look, expiresIn: 1 });
    vi.advanceTimersByTime(1000);
    expect(page.posted).toEqual([]);
    expect(page.navigations).toHaveLength(1);
  });
});

describe('the board application script: watching the application’s session', () => {
  const look = { sessionId: 's-1', boardId: 'b-1', locale: 'fr', theme: 'light', watch: '/session' };

  it(`asks the watch endpoint every ${WATCH_INTERVAL_MS} ms, and ends the page when it says the session ended`, async () => {
    const page = boardPage({
      watch: [
        { ok: true, body: { active: true } },
        { ok: true, body: { active: true } },
        { ok: true, body: { active: false, reason: 'revoked' } },
      ],
    });
    page.api.ready(look);
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS * 2);
    expect(page.fetched).toHaveLength(2);
    expect(page.fetched[0]).toEqual([
      '/session',
      { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } },
    ]);
    expect(page.types()).toEqual(['ready']);
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS);
    expect(page.types()).toEqual(['ready', 'revoked']);
    expect(page.navigations).toEqual([
      'https://api.example.com/prod/embed/ended?reason=revoked&locale=fr&theme=light',
    ]);
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS * 5);
    expect(page.fetched).toHaveLength(3);
  });

  it('keeps watching through a network error or an error answer, which end nothing', async () => {
    const page = boardPage({
      watch: [
        'network error',
        { ok: false },
        { ok: true, body: 'not json' },
        { ok: true, body: { active: true } },
      ],
    });
    page.api.ready(look);
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS * 5);
    expect(page.fetched).toHaveLength(5);
    expect(page.types()).toEqual(['ready']);
    expect(page.navigations).toEqual([]);
  });

  it('asks nothing while the tab is hidden, and asks at once when it is visible again', async () => {
    const page = boardPage({ watch: [{ ok: true, body: { active: false, reason: 'expired' } }] });
    page.api.ready(look);
    page.visibility('hidden');
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS * 10);
    expect(page.fetched).toEqual([]);
    page.visibility('visible');
    await vi.advanceTimersByTimeAsync(0);
    expect(page.fetched).toHaveLength(1);
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('stops watching and counting once the page has ended, and removes its listeners', async () => {
    const page = boardPage();
    page.api.ready({ ...look, expiresIn: 1 });
    expect(page.listenerCount('visibilitychange')).toBe(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(page.types()).toEqual(['ready', 'expired']);
    expect(page.listenerCount('visibilitychange')).toBe(0);
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS * 5);
    expect(page.fetched).toEqual([]);
  });
});

describe('GET /embed-board.js', () => {
  it('is served as public, cacheable JavaScript any origin may load', () => {
    expect(boardScriptResponse()).toMatchObject({
      statusCode: 200,
      headers: {
        'Content-Type': 'text/javascript; charset=utf-8',
        'Cache-Control': 'public, max-age=3600',
        'Access-Control-Allow-Origin': '*',
      },
      body: BOARD_SCRIPT,
    });
  });
});
