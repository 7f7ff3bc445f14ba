/**
 * Runs the reference board application on `node:http`. `npm start` starts it beside the service (see
 * local/start.ts); `node --import tsx examples/board-app/server.ts` runs it alone, with
 * `BOARD_APP_ISSUER` (the service's base URL), `BOARD_APP_PORT` (3001) and `BOARD_APP_HOST` (127.0.0.1).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BoardAppOptions, createBoardApp } from './app';

/** The path the embed page POSTs the hand-off to: a board's `appUrl` is `{origin}/handoff`. */
export const HANDOFF_PATH = '/handoff';

export interface RunningBoardApp {
  /** This application's origin, the `aud` its tokens must carry. */
  origin: string;
  /** The URL to give boards as their `appUrl`. */
  appUrl: string;
  /** Starts answering, for tokens of `issuer`; until then every request is answered 503. */
  serve(options: Omit<BoardAppOptions, 'origin'>): void;
  close(): Promise<void>;
}

/**
 * Listens on `port` (0: any free one) before it knows its issuer, so the service it runs beside can be
 * given its `appUrl` while starting; `serve` then names the issuer.
 */
export async function startBoardApp(options: {
  port: number;
  host?: string;
  /** The host name in its URL, when `host` is no address to browse to (0.0.0.0). */
  publicHost?: string;
}): Promise<RunningBoardApp> {
  const host = options.host ?? '127.0.0.1';
  let app: ReturnType<typeof createBoardApp> | undefined;
  const server = createServer((req, res) => {
    if (app) app.handle(req, res);
    else res.writeHead(503, { 'Retry-After': '1' }).end();
  });
  server.listen(options.port, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://${options.publicHost ?? host}:${port}`;
  return {
    origin,
    appUrl: `${origin}${HANDOFF_PATH}`,
    serve: (serveOptions) => {
      app = createBoardApp({ ...serveOptions, origin });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const issuer = process.env.BOARD_APP_ISSUER;
  const port = Number(process.env.BOARD_APP_PORT || 3001);
  if (!issuer || !Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(
      'Set BOARD_APP_ISSUER to the service base URL (and BOARD_APP_PORT to a port, 3001 by default).',
    );
    process.exit(1);
  }
  const running = await startBoardApp({ port, host: process.env.BOARD_APP_HOST || '127.0.0.1' });
  running.serve({ issuer });
  console.log(`Board application at ${running.origin}; give boards the appUrl ${running.appUrl}`);
}
