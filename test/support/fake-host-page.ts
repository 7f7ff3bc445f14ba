import { createContext, Script } from 'node:vm';
import { MESSAGE_SOURCE } from '#lib/adapters/http/embed/frame-script';
import { HOST_SCRIPT } from '#lib/adapters/http/embed/host-script';

/**
 * A host page for the host script without a browser: just the DOM, timers, `BroadcastChannel` and Web
 * Locks it touches, every one of them controlled by the test. Timers run only when the test advances the
 * page's clock; several pages (tabs of one origin) can share a channel bus and a lock manager.
 */

export const EMBED_URL =
  'https://api.example.com/prod/embed?token=q8Zc3Jx0bV1yTn4Kd7Wm2Rf9Hs6Lp5Ae&locale=de';
export const EMBED_ORIGIN = 'https://api.example.com';

/** A page's timers and `Date.now()`, which move only when the test says. */
export class FakeClock {
  now = Date.parse('2026-03-01T12:00:00.000Z');
  private seq = 0;
  private readonly timers = new Map<number, { at: number; run: () => void }>();
  /** Errors thrown by timer callbacks (the host script rethrows a failing callback's error this way). */
  readonly thrown: unknown[] = [];

  readonly setTimeout = (run: (...args: unknown[]) => void, ms = 0, ...args: unknown[]): number => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.now + Math.max(0, Number(ms) || 0), run: () => run(...args) });
    return id;
  };
  readonly clearTimeout = (id: number): void => {
    this.timers.delete(id);
  };
  readonly Date = { now: () => this.now };

  /** How many timers are waiting. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves the clock on by `ms`, running each timer due on the way, and the promise jobs they start. */
  async advance(ms: number): Promise<void> {
    const end = this.now + ms;
    await settle();
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, timer]) => timer.at <= end)
        .sort(([a, x], [b, y]) => x.at - y.at || a - b)[0];
      if (!due) break;
      const [id, timer] = due;
      this.timers.delete(id);
      this.now = Math.max(this.now, timer.at);
      try {
        timer.run();
      } catch (error) {
        this.thrown.push(error);
      }
      await settle();
    }
    this.now = end;
  }
}

/** Lets every pending promise job run (the script's, and those they start). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The BroadcastChannel of every page of one origin: a message reaches every other channel of its name. */
export class ChannelBus {
  readonly channels = new Set<FakeChannel>();
  readonly sent: unknown[] = [];
  /** Delivers messages at once (default), or holds them until `flush`. */
  hold = false;
  private held: Array<() => void> = [];
  deliver(from: FakeChannel, data: unknown) {
    this.sent.push(data);
    for (const channel of this.channels) {
      if (channel === from || channel.name !== from.name || channel.closed) continue;
      const run = () => channel.onmessage?.({ data: structuredClone(data) });
      if (this.hold) this.held.push(run);
      else queueMicrotask(run);
    }
  }
  flush() {
    const held = this.held;
    this.held = [];
    for (const run of held) run();
  }
}

export class FakeChannel {
  onmessage: ((event: { data: unknown }) => void) | null = null;
  closed = false;
  constructor(
    readonly bus: ChannelBus,
    readonly name: string,
  ) {
    bus.channels.add(this);
  }
  postMessage(data: unknown) {
    this.bus.deliver(this, data);
  }
  close() {
    this.closed = true;
  }
}

/** `navigator.locks` of one origin: exclusive locks by name, granted in the order asked. */
export class FakeLocks {
  readonly requested: string[] = [];
  private readonly queues = new Map<string, Array<() => void>>();
  request<T>(name: string, callback: () => T | Promise<T>): Promise<T> {
    this.requested.push(name);
    return new Promise<T>((resolve, reject) => {
      const grant = () => {
        Promise.resolve()
          .then(callback)
          .then(resolve, reject)
          .finally(() => {
            const queue = this.queues.get(name) ?? [];
            queue.shift();
            if (queue.length === 0) this.queues.delete(name);
            else queue[0]?.();
          });
      };
      const queue = this.queues.get(name);
      if (queue) queue.push(grant);
      else {
        this.queues.set(name, [grant]);
        grant();
      }
    });
  }
}

/** A fake iframe element: attributes, inline style, the window it shows, where it is. */
export class FakeIframe {
  readonly attributes: Record<string, string> = {};
  readonly style: Record<string, string> = {};
  readonly contentWindow = { name: 'a frame’s window' };
  parentNode: FakeElement | null = null;
  removed = false;
  offsetWidth = 960;
  setAttribute(name: string, value: string) {
    this.attributes[name] = value;
  }
  removeAttribute(name: string) {
    delete this.attributes[name];
  }
  remove() {
    this.removed = true;
    if (this.parentNode) {
      this.parentNode.children = this.parentNode.children.filter((child) => child !== this);
      this.parentNode = null;
    }
  }
}

export class FakeElement {
  children: FakeIframe[] = [];
  appendChild(child: FakeIframe) {
    child.parentNode = this;
    this.children.push(child);
  }
  insertBefore(child: FakeIframe, before: FakeIframe) {
    child.parentNode = this;
    const index = this.children.indexOf(before);
    this.children.splice(index === -1 ? this.children.length : index, 0, child);
  }
}

export interface FakePageOptions {
  clock?: FakeClock;
  /** The origin's channel bus and lock manager, shared with the origin's other pages (tabs). */
  bus?: ChannelBus;
  locks?: FakeLocks | null;
  /** Whether the page has an IntersectionObserver (the test then says when the frame shows). */
  intersection?: boolean;
  /** The script to run: the host script by default. */
  script?: string;
}

export interface Delivery {
  source: unknown;
  origin: string;
  data: unknown;
}

/** HOST_SCRIPT loaded into a bare page with one container element, `#board`. */
export function fakeHostPage(options: FakePageOptions = {}) {
  const clock = options.clock ?? new FakeClock();
  const listeners = new Set<(event: unknown) => void>();
  const container = new FakeElement();
  const created: FakeIframe[] = [];
  const observed: Array<{ target: FakeIframe; callback: (entries: unknown[]) => void; live: boolean }> = [];
  const document = {
    baseURI: 'https://app.acme.com/crm/',
    querySelector: (selector: string) => (selector === '#board' ? container : null),
    createElement: (tag: string) => {
      if (tag !== 'iframe') throw new Error(`unexpected element ${tag}`);
      const iframe = new FakeIframe();
      created.push(iframe);
      return iframe;
    },
  };
  const sandbox: Record<string, unknown> = {
    document,
    URL,
    Date: clock.Date,
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
    addEventListener: (type: string, listener: (event: unknown) => void) => {
      if (type === 'message') listeners.add(listener);
    },
    removeEventListener: (type: string, listener: (event: unknown) => void) => {
      if (type === 'message') listeners.delete(listener);
    },
  };
  if (options.bus) {
    const bus = options.bus;
    sandbox.BroadcastChannel = class extends FakeChannel {
      constructor(name: string) {
        super(bus, name);
      }
    };
  }
  if (options.locks) sandbox.navigator = { locks: options.locks };
  if (options.intersection) {
    sandbox.IntersectionObserver = class {
      private readonly entry: { target?: FakeIframe; callback: (entries: unknown[]) => void; live: boolean };
      constructor(callback: (entries: unknown[]) => void) {
        this.entry = { callback, live: true };
      }
      observe(target: FakeIframe) {
        this.entry.target = target;
        observed.push(
          this.entry as { target: FakeIframe; callback: (entries: unknown[]) => void; live: boolean },
        );
      }
      disconnect() {
        this.entry.live = false;
      }
    };
  }
  sandbox.window = sandbox;
  const context = createContext(sandbox);
  const load = () => new Script(options.script ?? HOST_SCRIPT).runInContext(context);
  load();
  const api = sandbox.EmbedSession as {
    // `iframe` is null only for a mount with fetchEmbedUrl alone, until its first link came.
    mount(target: unknown, options: unknown): { iframe: FakeIframe; destroy(): void };
  };
  return {
    api,
    sandbox,
    clock,
    container,
    created,
    listeners,
    thrown: clock.thrown,
    load,
    /** Delivers a message event to the page, as the browser would. */
    deliver: (event: Delivery) => {
      for (const listener of [...listeners]) listener(event);
    },
    /** The iframe comes into view (or leaves it), as an IntersectionObserver reports it. */
    intersect: (iframe: FakeIframe, isIntersecting = true) => {
      for (const entry of observed) {
        if (entry.live && entry.target === iframe) entry.callback([{ target: iframe, isIntersecting }]);
      }
    },
    observers: () => observed.filter((entry) => entry.live).length,
  };
}

export type FakeHostPage = ReturnType<typeof fakeHostPage>;

/** A message in the embed page's envelope, from `iframe`'s window at `origin`. */
export function fromFrame(
  page: FakeHostPage,
  iframe: FakeIframe,
  data: Record<string, unknown>,
  origin = EMBED_ORIGIN,
): void {
  page.deliver({ source: iframe.contentWindow, origin, data: { source: MESSAGE_SOURCE, ...data } });
}
