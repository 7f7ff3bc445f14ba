import { createHash } from 'node:crypto';
import { createContext, Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { MESSAGE_SOURCE } from '#lib/embed/frame-script';
import {
  HOST_SCRIPT,
  HOST_SCRIPT_CACHE,
  HOST_SCRIPT_INTEGRITY,
  HOST_SCRIPT_PATH,
  HOST_SCRIPT_VERSION,
  hostScriptResponse,
} from '#lib/embed/host-script';

const EMBED_URL = 'https://api.example.com/prod/embed?token=q8Zc3Jx0bV1yTn4Kd7Wm2Rf9Hs6Lp5Ae&locale=de';
const EMBED_ORIGIN = 'https://api.example.com';

/** A fake iframe element: attributes, inline style, the window it shows, and whether it was removed. */
class FakeIframe {
  readonly attributes: Record<string, string> = {};
  readonly style: Record<string, string> = {};
  readonly contentWindow = { name: 'the frame’s window' };
  removed = false;
  setAttribute(name: string, value: string) {
    this.attributes[name] = value;
  }
  remove() {
    this.removed = true;
  }
}

/** HOST_SCRIPT loaded into a bare page with one container element, `#board`. */
function hostPage() {
  const listeners = new Set<(event: unknown) => void>();
  const container = {
    children: [] as FakeIframe[],
    appendChild(child: FakeIframe) {
      this.children.push(child);
    },
  };
  const document = {
    baseURI: 'https://app.acme.com/crm/',
    querySelector: (selector: string) => (selector === '#board' ? container : null),
    createElement: (tag: string) => {
      if (tag !== 'iframe') throw new Error(`unexpected element ${tag}`);
      return new FakeIframe();
    },
  };
  const thrown: unknown[] = [];
  const sandbox: Record<string, unknown> = {
    document,
    URL,
    setTimeout: (callback: () => void) => {
      try {
        callback();
      } catch (error) {
        thrown.push(error);
      }
    },
    addEventListener: (type: string, listener: (event: unknown) => void) => {
      if (type === 'message') listeners.add(listener);
    },
    removeEventListener: (type: string, listener: (event: unknown) => void) => {
      if (type === 'message') listeners.delete(listener);
    },
  };
  sandbox.window = sandbox;
  const context = createContext(sandbox);
  const load = () => new Script(HOST_SCRIPT).runInContext(context);
  load();
  const api = sandbox.EmbedSession as {
    mount(target: unknown, options: unknown): { iframe: FakeIframe; destroy(): void };
  };
  return {
    api,
    sandbox,
    container,
    listeners,
    thrown,
    load,
    /** Delivers a message event to the page, as the browser would. */
    deliver: (event: { source: unknown; origin: string; data: unknown }) => {
      for (const listener of [...listeners]) listener(event);
    },
  };
}

/** A page with one mounted frame, recording every callback. */
function mounted(options: Record<string, unknown> = {}) {
  const page = hostPage();
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
  const fromFrame = (data: Record<string, unknown>) =>
    page.deliver({
      source: handle.iframe.contentWindow,
      origin: EMBED_ORIGIN,
      data: { source: MESSAGE_SOURCE, ...data },
    });
  return { page, handle, iframe: handle.iframe, calls, fromFrame };
}

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
    expect(Buffer.byteLength(HOST_SCRIPT)).toBeLessThan(6 * 1024);
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
    const { iframe } = hostPage().api.mount('#board', { url: '../embed?token=t' });
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
      ['error', { code: 'invalid_token', height: 20 }],
    ]);
  });

  it('calls onExpired, onRevoked and onError for those messages', () => {
    const { calls, fromFrame, iframe } = mounted();
    fromFrame({ type: 'error', code: 'session_revoked', height: 180 });
    fromFrame({ type: 'revoked' });
    expect(calls).toEqual([['error', { code: 'session_revoked', height: 180 }], ['revoked']]);
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

  it('lets a failing callback throw (to the console) without stopping the frame from resizing', () => {
    const { page, iframe, fromFrame } = mounted({
      onReady: () => {
        throw new Error('host bug');
      },
    });
    fromFrame({ type: 'ready', height: 300 });
    expect(iframe.style.height).toBe('300px');
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
