import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MESSAGE_SOURCE } from '#lib/adapters/http/embed/frame-script';
import {
  HOST_ERROR_CODES,
  HOST_SCRIPT,
  HOST_SCRIPT_CACHE,
  HOST_SCRIPT_INTEGRITY,
  HOST_SCRIPT_PATH,
  HOST_SCRIPT_VERSION,
  hostScriptResponse,
  READY_TIMEOUT_MS,
} from '#lib/adapters/http/embed/host-script';
import {
  ChannelBus,
  EMBED_ORIGIN,
  EMBED_URL,
  FakeChannel,
  FakeClock,
  type FakeHostPage,
  type FakeIframe,
  FakeLocks,
  fakeHostPage,
  fromFrame,
} from '#test/support/fake-host-page';

/** A page with one mounted frame, recording every callback. */
function mounted(options: Record<string, unknown> = {}, page: FakeHostPage = fakeHostPage()) {
  const calls: unknown[][] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) =>
      calls.push([name, ...args]);
  const handle = page.api.mount('#board', {
    url: EMBED_URL,
    onReady: record('ready'),
    onResize: record('resize'),
    onExpired: record('expired'),
    onRevoked: record('revoked'),
    onError: record('error'),
    ...options,
  });
  const iframe = handle.iframe as FakeIframe;
  return {
    page,
    handle,
    iframe,
    calls,
    fromFrame: (data: Record<string, unknown>) => fromFrame(page, iframe, data),
  };
}

const hostPage = () => fakeHostPage();

describe('the host script’s bytes', () => {
  it('are plain ASCII, so the integrity hash cannot depend on an encoding', () => {
    expect(HOST_SCRIPT).toMatch(/^[\x20-\x7e\n]*$/);
  });

  it('have the integrity value and version derived from them', () => {
    expect(HOST_SCRIPT_INTEGRITY).toBe(`sha384-${createHash('sha384').update(HOST_SCRIPT).digest('base64')}`);
    expect(HOST_SCRIPT_VERSION).toBe(createHash('sha256').update(HOST_SCRIPT).digest('hex').slice(0, 16));
    expect(HOST_SCRIPT_PATH).toBe(`/embed.js?v=${HOST_SCRIPT_VERSION}`);
  });

  it('are small and import nothing', () => {
    // Renewal across tabs, the ready timeout and the codes' messages took it from 6 KB to about 18 KB; what
    // travels is the compressed script, about 5.5 KB.
    expect(Buffer.byteLength(HOST_SCRIPT)).toBeLessThan(20 * 1024);
    expect(gzipSync(HOST_SCRIPT).byteLength).toBeLessThan(6 * 1024);
    expect(HOST_SCRIPT).not.toMatch(/\bimport\b|\brequire\(|\bfetch\(|XMLHttpRequest|eval\(/);
  });
});

describe('EmbedSession.mount: the iframe', () => {
  it('creates the documented iframe inside the element a selector names', () => {
    const { page, iframe } = mounted({ title: 'Acme board' });
    expect(page.container.children).toEqual([iframe]);
    expect(iframe.attributes).toEqual({
      src: EMBED_URL,
      title: 'Acme board',
      referrerpolicy: 'no-referrer',
      sandbox: 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox',
      allow: '',
      loading: 'lazy',
    });
    expect(iframe.style).toEqual({ display: 'block', width: '100%', border: '0', height: '150px' });
  });

  it('accepts an element as the target, and titles the frame "Board" by default', () => {
    const page = hostPage();
    const element = {
      children: [] as unknown[],
      appendChild: (child: unknown) => element.children.push(child),
    };
    const { iframe } = page.api.mount(element, { url: EMBED_URL });
    expect(element.children).toEqual([iframe]);
    expect(iframe.attributes.title).toBe('Board');
  });

  it('resolves a relative URL against the page', () => {
    const { iframe } = hostPage().api.mount('#board', { url: '../../../embed?token=t' });
    expect(iframe.attributes.src).toBe('https://app.acme.com/embed?token=t');
  });

  it('keeps a fixed height when given a number of pixels', () => {
    const { iframe, fromFrame } = mounted({ height: 480 });
    expect(iframe.style.height).toBe('480px');
    fromFrame({ type: 'ready', height: 222 });
    expect(iframe.style.height).toBe('480px');
  });

  it.each([
    ['a selector that matches nothing', '#nothing', { url: EMBED_URL }, 'target must be an element'],
    ['no target', null, { url: EMBED_URL }, 'target must be an element'],
    ['no options', '#board', undefined, 'options.url is required'],
    ['no URL', '#board', {}, 'options.url is required'],
    ['a javascript: URL', '#board', { url: 'javascript:alert(1)' }, 'must be an http(s) URL'],
    ['a negative height', '#board', { url: EMBED_URL, height: -1 }, 'options.height must be'],
    ['a height in text', '#board', { url: EMBED_URL, height: '300px' }, 'options.height must be'],
  ])('refuses %s with a TypeError', (_label, target, options, message) => {
    const page = hostPage();
    expect(() => page.api.mount(target, options)).toThrow(message);
    expect(page.container.children).toEqual([]);
    expect(page.listeners.size).toBe(0);
  });
});

describe('EmbedSession.mount: messages', () => {
  it('sizes the frame to every reported height and tells the callbacks', () => {
    const { iframe, calls, fromFrame } = mounted();
    fromFrame({ type: 'ready', sessionId: 's-1', boardId: 'b-1', height: 240 });
    expect(iframe.style.height).toBe('240px');
    fromFrame({ type: 'resize', sessionId: 's-1', boardId: 'b-1', height: 318.2 });
    expect(iframe.style.height).toBe('319px');
    expect(calls).toEqual([
      ['ready', { sessionId: 's-1', boardId: 'b-1', height: 240 }],
      ['resize', 319],
    ]);
  });

  it('hands the host only the documented fields', () => {
    const { calls, fromFrame } = mounted();
    fromFrame({
      type: 'ready',
      sessionId: 's-1',
      boardId: 'b-1',
      height: 10,
      email: 'x@example.com',
      token: 't',
    });
    fromFrame({ type: 'error', code: 'invalid_token', height: 20, message: 'hi' });
    expect(calls).toEqual([
      ['ready', { sessionId: 's-1', boardId: 'b-1', height: 10 }],
      ['error', { code: 'invalid_token', message: expect.stringContaining('not valid'), height: 20 }],
    ]);
  });

  it('calls onExpired, onRevoked and onError for those messages', () => {
    const { calls, fromFrame, iframe } = mounted();
    fromFrame({ type: 'error', code: 'session_revoked', height: 180 });
    fromFrame({ type: 'revoked' });
    expect(calls).toEqual([
      ['error', { code: 'session_revoked', message: 'The session was revoked.', height: 180 }],
      ['revoked'],
    ]);
    expect(iframe.style.height).toBe('180px');
  });

  it('calls onExpired for an expired message', () => {
    const { calls, fromFrame } = mounted();
    fromFrame({ type: 'expired', sessionId: 's-1' });
    expect(calls).toEqual([['expired']]);
  });

  it('reports the end once per mount: the first of expired and revoked, whoever says it again', () => {
    const { calls, fromFrame, iframe } = mounted();
    fromFrame({ type: 'expired' });
    fromFrame({ type: 'expired', height: 160 });
    fromFrame({ type: 'revoked' });
    expect(calls).toEqual([['expired']]);
    // The later messages still size the frame.
    expect(iframe.style.height).toBe('160px');
  });

  it('calls onReady once per mount: a later ready, from another page of the board, only resizes', () => {
    const { calls, fromFrame, iframe } = mounted();
    fromFrame({ type: 'ready', sessionId: 's-1', boardId: 'b-1', height: 240 });
    fromFrame({ type: 'ready', sessionId: 's-1', boardId: 'b-1', height: 300 });
    fromFrame({ type: 'ready', sessionId: 's-1', boardId: 'b-1' });
    expect(calls).toEqual([
      ['ready', { sessionId: 's-1', boardId: 'b-1', height: 240 }],
      ['resize', 300],
    ]);
    expect(iframe.style.height).toBe('300px');
  });

  it('calls onReady again for a new mount of the same page', () => {
    const page = hostPage();
    const heard: string[] = [];
    for (const name of ['first', 'second']) {
      const handle = page.api.mount('#board', { url: EMBED_URL, onReady: () => heard.push(name) });
      for (let i = 0; i < 2; i++)
        page.deliver({
          source: handle.iframe.contentWindow,
          origin: EMBED_ORIGIN,
          data: { source: MESSAGE_SOURCE, type: 'ready', height: 100 },
        });
      handle.destroy();
    }
    expect(heard).toEqual(['first', 'second']);
  });

  it.each([
    [
      'another window (another frame, or the host page itself)',
      { source: { other: true }, origin: EMBED_ORIGIN },
    ],
    ['another origin, even from its own frame', { origin: 'https://evil.example.com' }],
    ['the host’s own origin', { origin: 'https://app.acme.com' }],
  ])('ignores a message from %s', (_label, from) => {
    const { page, handle, calls, iframe } = mounted();
    const sender: { source?: unknown; origin: string } = from;
    page.deliver({
      source: 'source' in sender ? sender.source : handle.iframe.contentWindow,
      origin: sender.origin,
      data: { source: MESSAGE_SOURCE, type: 'ready', height: 999 },
    });
    expect(calls).toEqual([]);
    expect(iframe.style.height).toBe('150px');
  });

  describe('after the embed page hands the frame to the board’s application', () => {
    const APP = 'https://board.acme.test';
    function handedOff(announcedBy: { origin?: string; source?: unknown } = {}) {
      const frame = mounted();
      frame.page.deliver({
        source: 'source' in announcedBy ? announcedBy.source : frame.handle.iframe.contentWindow,
        origin: announcedBy.origin ?? EMBED_ORIGIN,
        data: { source: MESSAGE_SOURCE, type: 'handoff', origin: `${APP}/board?x=1` },
      });
      const fromApp = (data: Record<string, unknown>, origin = APP, source?: unknown) =>
        frame.page.deliver({
          source: source ?? frame.handle.iframe.contentWindow,
          origin,
          data: { source: MESSAGE_SOURCE, ...data },
        });
      return { ...frame, fromApp };
    }

    it('hears ready, resize, expired and revoked from the announced origin in its frame', () => {
      const { calls, fromApp, iframe } = handedOff();
      fromApp({ type: 'ready', height: 420, sessionId: 's-1', boardId: 'b-1' });
      fromApp({ type: 'resize', height: 480 });
      fromApp({ type: 'revoked' });
      expect(calls).toEqual([
        ['ready', { sessionId: 's-1', boardId: 'b-1', height: 420 }],
        ['resize', 480],
        ['revoked'],
      ]);
      expect(iframe.style.height).toBe('480px');
      const other = handedOff();
      other.fromApp({ type: 'expired' });
      expect(other.calls).toEqual([['expired']]);
    });

    it('announces nothing to the host itself', () => {
      const { calls } = handedOff();
      expect(calls).toEqual([]);
    });

    it('ignores the announced origin’s messages from another frame', () => {
      const { calls, fromApp } = handedOff();
      fromApp({ type: 'ready', height: 420 }, APP, { other: true });
      expect(calls).toEqual([]);
    });

    it('ignores any other origin in its own frame', () => {
      const { calls, fromApp } = handedOff();
      fromApp({ type: 'ready', height: 420 }, 'https://evil.example.com');
      expect(calls).toEqual([]);
    });

    it.each([
      ['another origin, in its frame', { origin: 'https://evil.example.com' }],
      ['another frame, from the embed origin', { source: { other: true } }],
    ])('takes no announcement from %s', (_label, announcedBy) => {
      const { calls, fromApp } = handedOff(announcedBy);
      fromApp({ type: 'ready', height: 420 });
      expect(calls).toEqual([]);
    });

    it('ignores the app’s attempt to announce yet another origin', () => {
      const { calls, fromApp } = handedOff();
      fromApp({ type: 'handoff', origin: 'https://evil.example.com' });
      fromApp({ type: 'ready', height: 1 }, 'https://evil.example.com');
      expect(calls).toEqual([]);
    });
  });

  it.each([
    ['no source field', { type: 'ready', height: 999 }],
    ['another source', { source: 'other-widget', type: 'ready', height: 999 }],
    ['a string', 'ready'],
    ['null', null],
  ])('ignores data with %s', (_label, data) => {
    const { page, handle, calls, iframe } = mounted();
    page.deliver({ source: handle.iframe.contentWindow, origin: EMBED_ORIGIN, data });
    expect(calls).toEqual([]);
    expect(iframe.style.height).toBe('150px');
  });

  it.each([
    ['negative', -5],
    ['not a number', '500'],
    ['infinite', Number.POSITIVE_INFINITY],
  ])('ignores a %s height', (_label, height) => {
    const { calls, fromFrame, iframe } = mounted();
    fromFrame({ type: 'resize', height });
    expect(iframe.style.height).toBe('150px');
    expect(calls).toEqual([]);
  });

  it('keeps two mounted frames apart: each hears only its own frame', () => {
    const page = hostPage();
    const heard: string[] = [];
    const a = page.api.mount('#board', { url: EMBED_URL, onReady: () => heard.push('a') });
    const b = page.api.mount('#board', { url: EMBED_URL, onReady: () => heard.push('b') });
    page.deliver({
      source: b.iframe.contentWindow,
      origin: EMBED_ORIGIN,
      data: { source: MESSAGE_SOURCE, type: 'ready' },
    });
    expect(heard).toEqual(['b']);
    expect(a.iframe.style.height).toBe('150px');
  });

  it('lets a failing callback throw (to the console) without stopping the frame from resizing', async () => {
    const { page, iframe, fromFrame } = mounted({
      onReady: () => {
        throw new Error('host bug');
      },
    });
    fromFrame({ type: 'ready', height: 300 });
    expect(iframe.style.height).toBe('300px');
    await page.clock.advance(0);
    expect(page.thrown).toEqual([new Error('host bug')]);
  });

  it('stops listening and removes the frame on destroy', () => {
    const { page, handle, calls, fromFrame } = mounted();
    handle.destroy();
    expect(handle.iframe.removed).toBe(true);
    expect(page.listeners.size).toBe(0);
    fromFrame({ type: 'ready', height: 300 });
    expect(calls).toEqual([]);
  });
});

describe('EmbedSession.mount: a frame that never says anything', () => {
  it(`reports ready_timeout when the frame says nothing within ${READY_TIMEOUT_MS / 1000} s`, async () => {
    const { page, calls } = mounted();
    await page.clock.advance(READY_TIMEOUT_MS - 1);
    expect(calls).toEqual([]);
    await page.clock.advance(1);
    expect(calls).toEqual([
      ['error', { code: 'ready_timeout', message: expect.stringContaining('frame-src') }],
    ]);
    await page.clock.advance(READY_TIMEOUT_MS * 4);
    expect(calls).toHaveLength(1);
  });

  it('counts the time from when a lazy frame comes into view, where the page can tell', async () => {
    const page = fakeHostPage({ intersection: true });
    const { calls, iframe } = mounted({ readyTimeout: 2000 }, page);
    await page.clock.advance(60_000);
    expect(calls).toEqual([]);
    page.intersect(iframe, false);
    await page.clock.advance(60_000);
    expect(calls).toEqual([]);
    page.intersect(iframe);
    expect(page.observers()).toBe(0);
    await page.clock.advance(2000);
    expect(calls).toEqual([['error', expect.objectContaining({ code: 'ready_timeout' })]]);
  });

  it.each([
    ['ready', { type: 'ready', height: 200 }],
    ['an error page', { type: 'error', code: 'invalid_token', height: 120 }],
    ['an end', { type: 'expired' }],
  ])('reports no timeout once the frame said %s', async (_label, data) => {
    const { page, calls, fromFrame } = mounted({ readyTimeout: 500 });
    fromFrame(data);
    await page.clock.advance(5000);
    expect(
      calls.map(([name, detail]) => [name, (detail as { code?: string } | undefined)?.code]),
    ).not.toContainEqual(['error', 'ready_timeout']);
  });

  it('still reports the timeout after only a height (the neutral ended view of an application with no session)', async () => {
    const { page, calls, fromFrame } = mounted({ readyTimeout: 500 });
    fromFrame({ type: 'resize', height: 150 });
    await page.clock.advance(500);
    expect(calls).toEqual([
      ['resize', 150],
      ['error', expect.objectContaining({ code: 'ready_timeout' })],
    ]);
  });

  it('hears a frame that reports ready after its timeout: the board shows late', async () => {
    const { page, calls, fromFrame } = mounted({ readyTimeout: 500 });
    await page.clock.advance(500);
    fromFrame({ type: 'ready', sessionId: 's-1', height: 200 });
    expect(calls.map(([name]) => name)).toEqual(['error', 'ready']);
  });

  it.each([
    ['zero', 0],
    ['negative', -1],
    ['text', '5000'],
  ])('refuses a %s readyTimeout with a TypeError', (_label, readyTimeout) => {
    const page = hostPage();
    expect(() => page.api.mount('#board', { url: EMBED_URL, readyTimeout })).toThrow(
      'options.readyTimeout must be a number of milliseconds',
    );
    expect(page.container.children).toEqual([]);
  });

  it('gives every code the host script reports a message', () => {
    const { calls, fromFrame } = mounted();
    for (const code of HOST_ERROR_CODES) fromFrame({ type: 'error', code });
    fromFrame({ type: 'error', code: 'from_a_newer_service' });
    fromFrame({ type: 'error', code: '__proto__' });
    const messages = calls.map(([, detail]) => (detail as { message: unknown }).message);
    expect(
      messages.slice(0, HOST_ERROR_CODES.length).every((m) => typeof m === 'string' && m.length > 10),
    ).toBe(true);
    expect(messages.slice(HOST_ERROR_CODES.length)).toEqual(['from_a_newer_service', '__proto__']);
  });
});

/** A host's fetchEmbedUrl that answers each call with the next of `answers` (the last one from then on). */
function fetcher(...answers: Array<string | Error | (() => Promise<string>)>) {
  const calls: number[] = [];
  const fetchEmbedUrl = () => {
    calls.push(calls.length + 1);
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    if (answer instanceof Error) return Promise.reject(answer);
    if (typeof answer === 'function') return answer();
    return Promise.resolve(answer);
  };
  return { fetchEmbedUrl, calls };
}

const RENEWED = 'https://api.example.com/prod/embed?token=Renewed0000000000000000000000000';
const RENEWED_2 = 'https://api.example.com/prod/embed?token=Renewed1111111111111111111111111';

/** The frames of the container that the user can see (the one loading out of sight is transparent). */
const visible = (page: FakeHostPage) =>
  page.container.children.filter((frame) => frame.style.opacity !== '0');

describe('EmbedSession.mount: renewal through fetchEmbedUrl', () => {
  it('renews when a third of the time the frame reported is left, counted from the message, not the clock', async () => {
    const { fetchEmbedUrl, calls } = fetcher(RENEWED);
    const page = hostPage();
    page.clock.now = Date.parse('1990-01-01T00:00:00Z');
    const frame = mounted({ fetchEmbedUrl }, page);
    frame.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 9_000 });
    await page.clock.advance(5999);
    expect(calls).toEqual([]);
    await page.clock.advance(1);
    expect(calls).toEqual([1]);
  });

  it('renews at most a minute before the end of a long session, waiting in timers it can hold', async () => {
    const { fetchEmbedUrl, calls } = fetcher(RENEWED);
    const { page, fromFrame } = mounted({ fetchEmbedUrl });
    const thirtyDays = 30 * 24 * 3_600_000;
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: thirtyDays });
    await page.clock.advance(thirtyDays - 60_001);
    expect(calls).toEqual([]);
    await page.clock.advance(1);
    expect(calls).toEqual([1]);
  });

  it('loads the new link out of sight, then swaps it in when it is ready: one onReady, the height kept', async () => {
    const { fetchEmbedUrl } = fetcher(RENEWED);
    const { page, calls, iframe, handle, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', boardId: 'b-1', height: 300, expiresInMs: 5000 });
    await page.clock.advance(4000);
    expect(page.container.children).toHaveLength(2);
    const [renewed] = page.container.children;
    expect(renewed?.attributes).toEqual({
      src: RENEWED,
      title: 'Board',
      referrerpolicy: 'no-referrer',
      sandbox: 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox',
      allow: '',
      'aria-hidden': 'true',
      inert: '',
    });
    expect(renewed?.style).toEqual({
      display: 'block',
      width: '960px',
      border: '0',
      position: 'absolute',
      opacity: '0',
      pointerEvents: 'none',
      height: '300px',
    });
    expect(visible(page)).toEqual([iframe]);
    // The shown frame still sizes itself until the swap; the renewed frame's messages before its ready
    // move nothing.
    fromFrame({ type: 'resize', height: 310 });
    const next = renewed as FakeIframe;
    fromFrameOf(page, next, { type: 'resize', height: 800 });
    expect(iframe.style.height).toBe('310px');
    expect(visible(page)).toEqual([iframe]);
    fromFrameOf(page, next, {
      type: 'ready',
      sessionId: 's-2',
      boardId: 'b-1',
      height: 310,
      expiresInMs: 5000,
    });
    expect(page.container.children).toEqual([next]);
    expect(iframe.removed).toBe(true);
    expect(handle.iframe).toBe(next);
    expect(next.style).toEqual({
      display: 'block',
      width: '100%',
      border: '0',
      position: '',
      opacity: '',
      pointerEvents: '',
      height: '310px',
    });
    expect(next.attributes['aria-hidden']).toBeUndefined();
    expect(next.attributes.inert).toBeUndefined();
    expect(calls.filter(([name]) => name === 'ready')).toEqual([
      ['ready', { sessionId: 's-1', boardId: 'b-1', height: 300 }],
    ]);
    expect(calls.filter(([name]) => name === 'expired' || name === 'error')).toEqual([]);
  });

  it('tells onResize when the renewed board has another height, and keeps listening to the new frame only', async () => {
    const { fetchEmbedUrl } = fetcher(RENEWED);
    const { page, calls, iframe, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await page.clock.advance(800);
    const next = page.container.children[0] as FakeIframe;
    fromFrameOf(page, next, { type: 'ready', sessionId: 's-2', height: 340, expiresInMs: 1000 });
    fromFrame({ type: 'resize', height: 999 });
    fromFrameOf(page, next, { type: 'resize', height: 360 });
    expect(calls).toEqual([
      ['ready', { sessionId: 's-1', height: 300 }],
      ['resize', 340],
      ['resize', 360],
    ]);
    expect(iframe.removed).toBe(true);
    expect(next.style.height).toBe('360px');
  });

  it('keeps renewing, each time from the time the new frame reports', async () => {
    const { fetchEmbedUrl, calls } = fetcher(RENEWED, RENEWED_2);
    const { page, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await page.clock.advance(800);
    fromFrameOf(page, page.container.children[0] as FakeIframe, {
      type: 'ready',
      sessionId: 's-2',
      height: 300,
      expiresInMs: 60_000,
    });
    await page.clock.advance(39_999);
    expect(calls).toEqual([1]);
    await page.clock.advance(1);
    expect(calls).toEqual([1, 2]);
    expect(page.container.children[0]?.attributes.src).toBe(RENEWED_2);
  });

  it('renews at once when the session expires before its time came (a throttled tab, no time reported)', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
    const { page, calls, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300 });
    fromFrame({ type: 'expired' });
    fromFrame({ type: 'expired', height: 180 });
    await page.clock.advance(0);
    expect(asked).toEqual([1]);
    fromFrameOf(page, page.container.children[0] as FakeIframe, {
      type: 'ready',
      sessionId: 's-2',
      height: 300,
    });
    expect(calls.map(([name]) => name)).toEqual(['ready', 'resize']);
  });

  it('renews a link that had expired when it loaded, and says ready once the new board shows', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
    const { page, calls, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'error', code: 'session_expired', height: 180 });
    fromFrame({ type: 'expired' });
    await page.clock.advance(0);
    expect(asked).toEqual([1]);
    const next = page.container.children[0] as FakeIframe;
    expect(next.style.height).toBe('180px');
    fromFrameOf(page, next, { type: 'ready', sessionId: 's-2', height: 300 });
    expect(calls).toEqual([['ready', { sessionId: 's-2', height: 300 }]]);
  });

  it('asks fetchEmbedUrl once per renewal, however often the end is said', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(
      () => new Promise((resolve) => setTimeout(resolve, 0, RENEWED)),
    );
    const { page, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 100 });
    await page.clock.advance(80);
    fromFrame({ type: 'expired' });
    fromFrame({ type: 'expired' });
    await page.clock.advance(100);
    expect(asked).toEqual([1]);
  });

  it('backs off after failures (1 s, 2 s, 4 s), then reports renewal_failed and the end', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(new Error('backend down'));
    const { page, calls, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 9_000 });
    await page.clock.advance(6000);
    expect(asked).toEqual([1]);
    await page.clock.advance(999);
    expect(asked).toHaveLength(1);
    await page.clock.advance(1);
    expect(asked).toHaveLength(2);
    await page.clock.advance(2000);
    expect(asked).toHaveLength(3);
    expect(calls.map(([name]) => name)).toEqual(['ready']);
    await page.clock.advance(4000);
    expect(asked).toHaveLength(4);
    expect(calls).toEqual([
      ['ready', expect.anything()],
      ['error', { code: 'renewal_failed', message: expect.stringContaining('backend down') }],
    ]);
    // The board stays until the session ends, then the end is the host's to handle.
    fromFrame({ type: 'expired' });
    await page.clock.advance(60_000);
    expect(asked).toHaveLength(4);
    expect(calls.map(([name]) => name)).toEqual(['ready', 'error', 'expired']);
  });

  it('reports the end with renewal_failed when the session had already ended', async () => {
    const { fetchEmbedUrl } = fetcher(new Error('backend down'));
    const { page, calls, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300 });
    fromFrame({ type: 'expired' });
    await page.clock.advance(10_000);
    expect(calls.map(([name]) => name)).toEqual(['ready', 'error', 'expired']);
  });

  it.each([
    ['an answer that is no string', { embedUrl: RENEWED } as unknown as string, 'did not give a URL'],
    ['a javascript: URL', 'javascript:alert(1)', 'http(s) URL'],
  ])('treats %s as a failed attempt, and never frames it', async (_label, answer, reason) => {
    const fetchEmbedUrl = () => Promise.resolve(answer);
    const { page, calls, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await page.clock.advance(10_000);
    expect(page.created).toHaveLength(1);
    expect(calls.at(-1)).toEqual([
      'error',
      { code: 'renewal_failed', message: expect.stringContaining(reason) },
    ]);
  });

  it('gives up on a fetchEmbedUrl that never answers, after the readyTimeout', async () => {
    const { page, calls, fromFrame } = mounted({
      fetchEmbedUrl: () => new Promise(() => undefined),
      readyTimeout: 1000,
    });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300 });
    fromFrame({ type: 'expired' });
    await page.clock.advance(1000 + 1000 + 1000 + 2000 + 1000 + 4000 + 1000);
    expect(calls.at(-2)).toEqual([
      'error',
      { code: 'renewal_failed', message: expect.stringContaining('did not answer in time') },
    ]);
  });

  it.each([
    ['refuses it', { type: 'error', code: 'bound_to_another_browser' }, 'bound_to_another_browser'],
    ['says nothing within the readyTimeout', null, 'ready_timeout'],
    ['says it expired', { type: 'expired' }, 'expired'],
  ])(
    'counts a new link whose frame %s as a failed attempt, removed unseen',
    async (_label, answer, reason) => {
      const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
      const { page, calls, iframe, fromFrame } = mounted({ fetchEmbedUrl, readyTimeout: 3000 });
      fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 90_000 });
      await page.clock.advance(60_000);
      for (let attempt = 1; attempt <= 4; attempt++) {
        const next = page.container.children[0] as FakeIframe;
        expect(next).not.toBe(iframe);
        if (answer) fromFrameOf(page, next, answer);
        else await page.clock.advance(3000);
        expect(next.removed).toBe(true);
        expect(page.container.children).toEqual([iframe]);
        await page.clock.advance(attempt < 4 ? 1000 * 2 ** (attempt - 1) : 0);
      }
      expect(asked).toHaveLength(4);
      expect(calls.at(-1)).toEqual([
        'error',
        { code: 'renewal_failed', message: expect.stringContaining(reason) },
      ]);
      expect(visible(page)).toEqual([iframe]);
    },
  );

  it('never renews a revoked session, and drops a renewal under way', async () => {
    let answer: (url: string) => void = () => undefined;
    const fetchEmbedUrl = () => new Promise<string>((resolve) => (answer = resolve));
    const { page, calls, iframe, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await page.clock.advance(800);
    fromFrame({ type: 'revoked' });
    answer(RENEWED);
    await page.clock.advance(60_000);
    expect(page.created).toEqual([iframe]);
    fromFrame({ type: 'expired' });
    await page.clock.advance(60_000);
    expect(page.created).toEqual([iframe]);
    expect(calls.map(([name]) => name)).toEqual(['ready', 'revoked']);
  });

  it('never renews a link revoked at load: onError, then onRevoked', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
    const { page, calls, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'error', code: 'session_revoked', height: 180 });
    fromFrame({ type: 'revoked' });
    await page.clock.advance(60_000);
    expect(asked).toEqual([]);
    expect(calls.map(([name]) => name)).toEqual(['error', 'revoked']);
  });

  it('removes the frame loading out of sight when the session is revoked meanwhile', async () => {
    const { fetchEmbedUrl } = fetcher(RENEWED);
    const { page, iframe, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await page.clock.advance(800);
    const next = page.container.children[0] as FakeIframe;
    fromFrame({ type: 'revoked' });
    expect(next.removed).toBe(true);
    expect(page.container.children).toEqual([iframe]);
  });

  it('mounts with fetchEmbedUrl alone: the first link comes from it', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
    const page = hostPage();
    const heard: unknown[] = [];
    const handle = page.api.mount('#board', {
      fetchEmbedUrl,
      onReady: (detail: unknown) => heard.push(detail),
    });
    expect(handle.iframe).toBeNull();
    await page.clock.advance(0);
    expect(asked).toEqual([1]);
    const iframe = handle.iframe as FakeIframe;
    expect(page.container.children).toEqual([iframe]);
    expect(iframe.attributes).toMatchObject({ src: RENEWED, loading: 'lazy' });
    expect(iframe.style).toEqual({ display: 'block', width: '100%', border: '0', height: '150px' });
    fromFrame(page, iframe, { type: 'ready', sessionId: 's-1', height: 240 });
    expect(heard).toEqual([{ sessionId: 's-1', height: 240 }]);
  });

  it('asks nothing for a mount destroyed at once, as React StrictMode does before mounting again', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
    const page = hostPage();
    page.api.mount('#board', { fetchEmbedUrl }).destroy();
    const kept = page.api.mount('#board', { fetchEmbedUrl });
    await page.clock.advance(0);
    expect(asked).toEqual([1]);
    expect(page.container.children).toEqual([kept.iframe]);
    expect(page.listeners.size).toBe(1);
  });

  it('reports renewal_failed when fetchEmbedUrl alone gives no first link', async () => {
    const page = hostPage();
    const heard: unknown[] = [];
    page.api.mount('#board', {
      fetchEmbedUrl: () => Promise.reject(new Error('signed out')),
      onError: (detail: unknown) => heard.push(detail),
    });
    await page.clock.advance(10_000);
    expect(page.container.children).toEqual([]);
    expect(heard).toEqual([{ code: 'renewal_failed', message: expect.stringContaining('signed out') }]);
  });

  it.each([
    [
      'a fetchEmbedUrl that is no function',
      { url: EMBED_URL, fetchEmbedUrl: 'https://x' },
      'fetchEmbedUrl must be',
    ],
    ['neither url nor fetchEmbedUrl', {}, 'options.url is required'],
  ])('refuses %s with a TypeError', (_label, options, message) => {
    const page = hostPage();
    expect(() => page.api.mount('#board', options)).toThrow(message);
    expect(page.listeners.size).toBe(0);
  });

  it('stops everything on destroy: no timer, no listener, no frame, no call to fetchEmbedUrl', async () => {
    const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
    const { page, handle, calls, fromFrame } = mounted({ fetchEmbedUrl });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await page.clock.advance(800);
    expect(page.container.children).toHaveLength(2);
    handle.destroy();
    handle.destroy();
    expect(page.container.children).toEqual([]);
    expect(page.listeners.size).toBe(0);
    await page.clock.advance(0);
    expect(page.clock.pending).toBe(0);
    await page.clock.advance(3_600_000);
    expect(asked).toEqual([1]);
    expect(calls.map(([name]) => name)).toEqual(['ready']);
  });

  it('without fetchEmbedUrl, renews nothing: the end is the host’s, as before', async () => {
    const { page, calls, fromFrame } = mounted();
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await page.clock.advance(60_000);
    fromFrame({ type: 'expired' });
    await page.clock.advance(60_000);
    expect(page.created).toHaveLength(1);
    expect(calls.map(([name]) => name)).toEqual(['ready', 'expired']);
  });
});

describe('EmbedSession.mount: frames and tabs that hold the same session renew once', () => {
  /** Two mounts of one session in one page, or in two pages (tabs) of one origin. */
  function twoHolders(tabs: boolean, locks = true) {
    const bus = new ChannelBus();
    const lockManager = locks ? new FakeLocks() : null;
    const clock = new FakeClock();
    const first = fakeHostPage({ clock, bus, locks: lockManager });
    const second = tabs ? fakeHostPage({ clock, bus, locks: lockManager }) : first;
    let release: () => void = () => undefined;
    const asked: string[] = [];
    const backend = (who: string) => () => {
      asked.push(who);
      return new Promise<string>((resolve) => (release = () => resolve(RENEWED)));
    };
    const a = mounted({ fetchEmbedUrl: backend('a') }, first);
    const b = mounted({ fetchEmbedUrl: backend('b') }, second);
    return { bus, clock, lockManager, a, b, asked, release: () => release() };
  }

  it.each([
    ['two frames of one page', false],
    ['two tabs of one origin', true],
  ])('%s: one asks fetchEmbedUrl, the other takes its link', async (_label, tabs) => {
    const { clock, a, b, asked, release } = twoHolders(tabs);
    for (const holder of [a, b])
      holder.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await clock.advance(800);
    expect(asked).toEqual(['a']);
    release();
    await clock.advance(0);
    expect(asked).toEqual(['a']);
    const renewedFrames = (holder: typeof a) =>
      holder.page.created.filter((frame) => frame.attributes.src === RENEWED && !frame.removed);
    expect(renewedFrames(a)).toHaveLength(tabs ? 1 : 2);
    if (tabs) expect(renewedFrames(b)).toHaveLength(1);
  });

  it('a tab whose renewal time comes later takes the link another tab got, at once', async () => {
    const { clock, a, b, asked, release, bus } = twoHolders(true);
    a.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    b.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 100_000 });
    await clock.advance(800);
    release();
    await clock.advance(0);
    expect(asked).toEqual(['a']);
    expect(b.page.container.children.map((frame) => frame.attributes.src)).toEqual([RENEWED, EMBED_URL]);
    expect(bus.sent).toEqual([
      { source: MESSAGE_SOURCE, type: 'renewing', key: 's-1' },
      { source: MESSAGE_SOURCE, type: 'renewed', key: 's-1', url: RENEWED },
    ]);
  });

  it('a tab that gets the lock before the other’s answer arrived waits for that answer', async () => {
    const { clock, a, b, asked, release, bus, lockManager } = twoHolders(true);
    for (const holder of [a, b])
      holder.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await clock.advance(800);
    expect(lockManager?.requested).toEqual(['embed-session-renewal:s-1', 'embed-session-renewal:s-1']);
    bus.hold = true;
    release();
    await clock.advance(0);
    bus.flush();
    await clock.advance(0);
    expect(asked).toEqual(['a']);
    expect(b.page.container.children[0]?.attributes.src).toBe(RENEWED);
  });

  it('asks fetchEmbedUrl itself when the tab that announced a renewal never answered (it closed)', async () => {
    const bus = new ChannelBus();
    const clock = new FakeClock();
    const page = fakeHostPage({ clock, bus, locks: new FakeLocks() });
    const { fetchEmbedUrl, calls: asked } = fetcher(RENEWED);
    const { fromFrame } = mounted({ fetchEmbedUrl, readyTimeout: 1000 }, page);
    new FakeChannel(bus, 'embed-session-renewal').postMessage({
      source: MESSAGE_SOURCE,
      type: 'renewing',
      key: 's-1',
    });
    fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 900 });
    await clock.advance(600);
    await clock.advance(1000);
    expect(asked).toEqual([]);
    await clock.advance(1000);
    expect(asked).toEqual([1]);
    expect(page.container.children[0]?.attributes.src).toBe(RENEWED);
  });

  it('another session is another renewal', async () => {
    const { clock, a, b, asked, release } = twoHolders(true);
    a.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    b.fromFrame({ type: 'ready', sessionId: 's-2', height: 300, expiresInMs: 1000 });
    await clock.advance(800);
    release();
    await clock.advance(0);
    expect(asked).toEqual(['a', 'b']);
  });

  it('without Web Locks, frames of one page still share one renewal', async () => {
    const { clock, a, b, asked, release } = twoHolders(false, false);
    for (const holder of [a, b])
      holder.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await clock.advance(800);
    release();
    await clock.advance(0);
    expect(asked).toEqual(['a']);
  });

  it('asks again when the shared link did not show, rather than offering it again', async () => {
    const { clock, a, b, asked, release } = twoHolders(true);
    for (const holder of [a, b])
      holder.fromFrame({ type: 'ready', sessionId: 's-1', height: 300, expiresInMs: 1000 });
    await clock.advance(800);
    release();
    await clock.advance(0);
    const next = b.page.container.children[0] as FakeIframe;
    fromFrameOf(b.page, next, { type: 'error', code: 'session_expired' });
    await clock.advance(1000);
    expect(asked).toEqual(['a', 'b']);
  });
});

/** A message from `iframe` of `page`, from the embed origin. */
function fromFrameOf(page: FakeHostPage, iframe: FakeIframe, data: Record<string, unknown>) {
  fromFrame(page, iframe, data, EMBED_ORIGIN);
}

describe('window.EmbedSession', () => {
  it('is defined once: loading the script again keeps the first', () => {
    const page = hostPage();
    const first = page.sandbox.EmbedSession;
    page.load();
    expect(page.sandbox.EmbedSession).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });
});

describe('hostScriptResponse', () => {
  const event = (query: Record<string, string> | null, headers: Record<string, string> = {}) => ({
    headers,
    queryStringParameters: query,
  });

  it('serves the script, readable from any origin, at its versioned URL for a year, immutable', () => {
    const result = hostScriptResponse(event({ v: HOST_SCRIPT_VERSION }));
    expect(result).toEqual({
      statusCode: 200,
      headers: {
        'Content-Type': 'text/javascript; charset=utf-8',
        'Cache-Control': 'public, max-age=31536000, immutable',
        ETag: `"${HOST_SCRIPT_VERSION}"`,
        'Access-Control-Allow-Origin': '*',
        'Cross-Origin-Resource-Policy': 'cross-origin',
        'X-Content-Type-Options': 'nosniff',
      },
      body: HOST_SCRIPT,
    });
  });

  it.each([
    ['no version', null],
    ['another version', { v: '0123456789abcdef' }],
    ['an empty version', { v: '' }],
  ])('serves it for an hour, to revalidate by ETag, with %s', (_label, query) => {
    const result = hostScriptResponse(event(query));
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe(HOST_SCRIPT);
    expect(result.headers?.['Cache-Control']).toBe(HOST_SCRIPT_CACHE.unversioned);
    expect(result.headers?.['Cache-Control']).toBe('public, max-age=3600');
  });

  it.each([
    `"${HOST_SCRIPT_VERSION}"`,
    `W/"${HOST_SCRIPT_VERSION}"`,
    `"other", "${HOST_SCRIPT_VERSION}"`,
    '*',
  ])('answers 304 with no body when If-None-Match is %s', (tag) => {
    const result = hostScriptResponse(event(null, { 'If-None-Match': tag }));
    expect(result.statusCode).toBe(304);
    expect(result.body).toBe('');
    expect(result.headers).toMatchObject({
      ETag: `"${HOST_SCRIPT_VERSION}"`,
      'Access-Control-Allow-Origin': '*',
    });
  });

  it('serves the script when If-None-Match names another version', () => {
    const result = hostScriptResponse(event(null, { 'if-none-match': '"0123456789abcdef"' }));
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe(HOST_SCRIPT);
  });
});
