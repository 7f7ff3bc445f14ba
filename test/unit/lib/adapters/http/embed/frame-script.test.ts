import { createHash } from 'node:crypto';
import { createContext, Script } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FRAME_SCRIPT, FRAME_SCRIPT_HASH, MESSAGE_SOURCE } from '#lib/adapters/http/embed/frame-script';
import { jsonIsland } from '#lib/adapters/http/embed/html';

/**
 * FRAME_SCRIPT run in a bare context with just the DOM it touches, so each rule is checked without a
 * browser (the browser tests check the same script in Chromium).
 */
interface Posted {
  message: Record<string, unknown>;
  targetOrigin: string;
}

interface PageOptions {
  state: 'ready' | 'error' | 'ended';
  code?: string;
  reason?: string;
  expiresInMs?: number;
  framed?: boolean;
  context?: unknown;
  height?: number;
  /** The avatar images on the page: already failed (complete, no width), or still loading. */
  avatars?: FakeImage[];
}

/** An avatar `<img>`: whether it finished loading, its width, its error listeners, whether it was removed. */
class FakeImage {
  removed = false;
  readonly listeners: Array<() => void> = [];
  constructor(
    readonly complete: boolean,
    readonly naturalWidth: number,
  ) {}
  addEventListener(type: string, listener: () => void) {
    if (type === 'error') this.listeners.push(listener);
  }
  remove() {
    this.removed = true;
  }
  fail() {
    for (const listener of this.listeners) listener();
  }
}

function runPage(options: PageOptions) {
  const posted: Posted[] = [];
  const listeners: Record<string, Array<() => void>> = {};
  const observers: Array<() => void> = [];
  const attributes: Record<string, string> = { 'data-embed-state': options.state };
  if (options.code !== undefined) attributes['data-embed-code'] = options.code;
  if (options.reason !== undefined) attributes['data-embed-reason'] = options.reason;
  if (options.expiresInMs !== undefined) attributes['data-expires-in-ms'] = String(options.expiresInMs);
  const time = { textContent: 'UTC text', getAttribute: () => '2026-01-31T17:05:00.000Z' };
  const root = {
    height: options.height ?? 240.2,
    children: ['board'] as unknown[],
    classes: [] as string[],
    getBoundingClientRect() {
      return { height: this.height };
    },
    replaceChildren(...nodes: unknown[]) {
      this.children = nodes;
    },
    classList: {
      add: (name: string) => {
        root.classes.push(name);
      },
    },
  };
  const expiredView = { cloneNode: () => 'expired view' };
  const elements: Record<string, unknown> = {
    'embed-root': root,
    'embed-expired': { content: expiredView },
  };
  if (options.context !== undefined) {
    elements['embed-context'] = { textContent: jsonIsland(options.context) };
  }
  const document = {
    body: {
      getAttribute: (name: string) => attributes[name] ?? null,
      setAttribute: (name: string, value: string) => {
        attributes[name] = value;
      },
    },
    documentElement: { lang: 'de' },
    getElementById: (id: string) => elements[id] ?? null,
    querySelectorAll: (selector: string) =>
      selector === 'time[data-local]'
        ? [time]
        : selector === 'img.avatar-image'
          ? (options.avatars ?? [])
          : [],
    addEventListener: (type: string, listener: () => void) => {
      listeners[type] = [...(listeners[type] ?? []), listener];
    },
  };
  const parent = {
    postMessage: (message: Record<string, unknown>, targetOrigin: string) => {
      posted.push({ message, targetOrigin });
    },
  };
  const sandbox: Record<string, unknown> = {
    document,
    setTimeout,
    clearTimeout,
    Date,
    ResizeObserver: class {
      constructor(private readonly callback: () => void) {}
      observe() {
        observers.push(this.callback);
      }
    },
  };
  sandbox.window = sandbox;
  sandbox.parent = options.framed === false ? sandbox : parent;
  (sandbox.window as Record<string, unknown>).parent = sandbox.parent;
  new Script(FRAME_SCRIPT).runInContext(createContext(sandbox));
  return {
    posted,
    messages: () => posted.map((p) => p.message),
    types: () => posted.map((p) => p.message.type),
    root,
    time,
    attributes,
    resize: (height: number) => {
      root.height = height;
      for (const observer of observers) observer();
    },
    dispatch: (type: string) => {
      for (const listener of listeners[type] ?? []) listener();
    },
  };
}

const CONTEXT = {
  board: { id: 'board-42', name: 'Roadmap' },
  session: {
    id: 'session-1',
    boardId: 'board-42',
    userId: 'customer-7',
    email: 'grace@example.com',
    metadata: { secret: 'metadata-value' },
    expiresAt: '2026-01-31T00:00:00.000Z',
  },
};

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('FRAME_SCRIPT', () => {
  it('is allowed by its own hash in the CSP', () => {
    expect(FRAME_SCRIPT_HASH).toBe(`'sha256-${createHash('sha256').update(FRAME_SCRIPT).digest('base64')}'`);
  });

  it('is plain ASCII, so its bytes (and hash) cannot change with an encoding', () => {
    expect(FRAME_SCRIPT).toMatch(/^[\x20-\x7e\n]*$/);
  });

  it('contains nothing that could close its script element', () => {
    expect(FRAME_SCRIPT.toLowerCase()).not.toContain('</script');
    expect(FRAME_SCRIPT).not.toContain('<!--');
  });
});

describe('the board page’s messages', () => {
  it('posts ready once with the session and board ids and the content height, to any origin', () => {
    const page = runPage({ state: 'ready', context: CONTEXT, expiresInMs: 60_000 });
    expect(page.posted).toEqual([
      {
        message: {
          source: MESSAGE_SOURCE,
          type: 'ready',
          sessionId: 'session-1',
          boardId: 'board-42',
          height: 241,
          expiresInMs: 60_000,
        },
        targetOrigin: '*',
      },
    ]);
  });

  it('tells the host how long the session has left, as the server counted it, whatever the browser’s clock says', () => {
    vi.setSystemTime(new Date('2031-06-01T00:00:00.000Z'));
    const page = runPage({ state: 'ready', context: CONTEXT, expiresInMs: 4_000 });
    expect(page.messages()).toEqual([expect.objectContaining({ type: 'ready', expiresInMs: 4_000 })]);
  });

  it('says no remaining time when the page does not know it', () => {
    const page = runPage({ state: 'ready', context: CONTEXT });
    expect(page.messages()[0]).not.toHaveProperty('expiresInMs');
  });

  it('never posts the token, the e-mail, the user id or metadata', () => {
    const page = runPage({ state: 'ready', context: CONTEXT, expiresInMs: 1000 });
    page.resize(300);
    vi.advanceTimersByTime(1000);
    const text = JSON.stringify(page.messages());
    for (const secret of ['grace@example.com', 'metadata-value', 'customer-7', 'token']) {
      expect(text).not.toContain(secret);
    }
    for (const message of page.messages()) {
      for (const key of Object.keys(message)) {
        expect(['source', 'type', 'sessionId', 'boardId', 'height', 'code', 'expiresInMs']).toContain(key);
      }
    }
  });

  it('posts resize when the content height changes, and only then', () => {
    const page = runPage({ state: 'ready', context: CONTEXT, height: 240 });
    page.resize(240);
    page.resize(412.5);
    page.resize(413);
    expect(page.types()).toEqual(['ready', 'resize']);
    expect(page.messages()[1]).toMatchObject({ type: 'resize', height: 413, sessionId: 'session-1' });
  });

  it('watches no expiry when the page does not say when the session expires', () => {
    const page = runPage({ state: 'ready', context: CONTEXT });
    vi.advanceTimersByTime(365 * 24 * 3_600_000);
    expect(page.types()).toEqual(['ready']);
  });

  it('posts nothing when the page is not in a frame', () => {
    const page = runPage({ state: 'ready', context: CONTEXT, framed: false, expiresInMs: 10 });
    page.resize(999);
    vi.advanceTimersByTime(10);
    expect(page.posted).toEqual([]);
  });

  it('shows the expired view and posts expired when the session’s time runs out while open', () => {
    const page = runPage({ state: 'ready', context: CONTEXT, expiresInMs: 5_000 });
    vi.advanceTimersByTime(4_999);
    expect(page.types()).toEqual(['ready']);
    expect(page.root.children).toEqual(['board']);
    vi.advanceTimersByTime(1);
    expect(page.types()).toEqual(['ready', 'expired']);
    expect(page.messages()[1]).toEqual({
      source: MESSAGE_SOURCE,
      type: 'expired',
      sessionId: 'session-1',
      boardId: 'board-42',
    });
    expect(page.root.children).toEqual(['expired view']);
    expect(page.root.classes).toEqual(['notice-page']);
    expect(page.attributes['data-embed-state']).toBe('expired');
    vi.advanceTimersByTime(120_000);
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('counts the expiry from the server’s remaining time, not from the browser’s clock', () => {
    // The browser's clock is a year ahead of expiresAt: only the server's 5 s count.
    vi.setSystemTime(new Date('2027-02-01T00:00:00.000Z'));
    const page = runPage({ state: 'ready', context: CONTEXT, expiresInMs: 5_000 });
    vi.advanceTimersByTime(4_000);
    expect(page.types()).toEqual(['ready']);
    vi.advanceTimersByTime(1_000);
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('waits out an expiry beyond what one timer can hold (30 days), without firing early', () => {
    const thirtyDays = 30 * 24 * 3_600_000;
    const page = runPage({ state: 'ready', context: CONTEXT, expiresInMs: thirtyDays });
    vi.advanceTimersByTime(thirtyDays - 1);
    expect(page.types()).toEqual(['ready']);
    vi.advanceTimersByTime(1);
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('notices a passed expiry as soon as the tab becomes visible again', () => {
    const page = runPage({ state: 'ready', context: CONTEXT, expiresInMs: 90_000 });
    // A throttled background tab: the clock moved on, the timer did not fire.
    vi.setSystemTime(Date.now() + 90_000);
    page.dispatch('visibilitychange');
    expect(page.types()).toEqual(['ready', 'expired']);
  });

  it('shows the expiry in the viewer’s time zone, in the page’s language', () => {
    const page = runPage({ state: 'ready', context: CONTEXT });
    expect(page.time.textContent).toBe(
      new Date('2026-01-31T17:05:00.000Z').toLocaleString('de', { dateStyle: 'medium', timeStyle: 'short' }),
    );
  });

  it('removes an avatar image that fails to load, so the initials under it show', () => {
    const loading = new FakeImage(false, 0);
    runPage({ state: 'ready', context: CONTEXT, avatars: [loading] });
    expect(loading.removed).toBe(false);
    loading.fail();
    expect(loading.removed).toBe(true);
  });

  it('removes an avatar image that failed before the script ran, and keeps one that loaded', () => {
    const failed = new FakeImage(true, 0);
    const loaded = new FakeImage(true, 64);
    runPage({ state: 'ready', context: CONTEXT, avatars: [failed, loaded] });
    expect(failed.removed).toBe(true);
    expect(loaded.removed).toBe(false);
  });

  it('still reports ready and resizes, without ids, when the context island is unreadable', () => {
    const page = runPage({ state: 'ready', context: '{not json' });
    expect(page.messages()[0]).toMatchObject({ type: 'ready', height: 241 });
  });
});

describe('an error page’s messages', () => {
  it('posts error with its code and height, and no ids', () => {
    const page = runPage({ state: 'error', code: 'invalid_token', height: 211.4 });
    expect(page.messages()).toEqual([
      { source: MESSAGE_SOURCE, type: 'error', code: 'invalid_token', height: 212 },
    ]);
  });

  it('posts expired after the error on the expired page', () => {
    expect(runPage({ state: 'error', code: 'session_expired' }).types()).toEqual(['error', 'expired']);
  });

  it('posts revoked after the error on the revoked page', () => {
    expect(runPage({ state: 'error', code: 'session_revoked' }).types()).toEqual(['error', 'revoked']);
  });

  it('resizes like the board page', () => {
    const page = runPage({ state: 'error', code: 'board_gone', height: 200 });
    page.resize(260);
    expect(page.messages()[1]).toEqual({ source: MESSAGE_SOURCE, type: 'resize', height: 260 });
  });
});

describe('the ended view’s messages', () => {
  it.each(['expired', 'revoked'])('posts %s with its height, and no ids', (reason) => {
    const page = runPage({ state: 'ended', reason, height: 150.5 });
    expect(page.messages()).toEqual([{ source: MESSAGE_SOURCE, type: reason, height: 151 }]);
  });

  it('posts only its height from the neutral view, which tells no end', () => {
    const page = runPage({ state: 'ended', reason: 'ended', height: 150 });
    expect(page.messages()).toEqual([{ source: MESSAGE_SOURCE, type: 'resize', height: 150 }]);
  });
});
