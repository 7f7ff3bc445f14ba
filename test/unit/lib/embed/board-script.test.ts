import { createContext, Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BOARD_SCRIPT, boardScriptResponse } from '#lib/embed/board-script';
import { MESSAGE_SOURCE } from '#lib/embed/frame-script';

/** A framed board application page: what it posts to its parent, and its body's height. */
function framedPage() {
  const posted: [unknown, string][] = [];
  const observers: (() => void)[] = [];
  const body = { height: 300, getBoundingClientRect: () => ({ height: body.height }) };
  const sandbox: Record<string, unknown> = {
    document: { body },
    parent: { postMessage: (data: unknown, target: string) => posted.push([data, target]) },
    ResizeObserver: class {
      constructor(private readonly callback: () => void) {}
      observe() {
        observers.push(this.callback);
      }
    },
  };
  sandbox.window = sandbox;
  new Script(BOARD_SCRIPT).runInContext(createContext(sandbox));
  const api = sandbox.EmbedBoard as { ready(ids?: unknown): void; expired(): void; revoked(): void };
  return {
    api,
    posted,
    body,
    resized: () => {
      for (const callback of observers) callback();
    },
  };
}

describe('the board application script', () => {
  it('posts ready with the ids and the height in the embed page’s envelope, then each new height', () => {
    const page = framedPage();
    page.api.ready({ sessionId: 's-1', boardId: 'b-1', email: 'never@example.com' });
    page.body.height = 480;
    page.resized();
    page.resized();
    expect(page.posted).toEqual([
      [{ source: MESSAGE_SOURCE, type: 'ready', sessionId: 's-1', boardId: 'b-1', height: 300 }, '*'],
      [{ source: MESSAGE_SOURCE, type: 'resize', sessionId: 's-1', boardId: 'b-1', height: 480 }, '*'],
    ]);
  });

  it('posts expired and revoked', () => {
    const page = framedPage();
    page.api.expired();
    page.api.revoked();
    expect(page.posted.map(([data]) => (data as { type: string }).type)).toEqual(['expired', 'revoked']);
  });

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
