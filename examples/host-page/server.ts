/**
 * Runs the example host page on `node:http`: `npm run example:host-page`, with the API key in
 * `EMBED_API_KEY` (an environment variable rather than a flag, so it shows in no process list or shell
 * history line of its own). Also `EMBED_API_URL` (the service, `http://127.0.0.1:3000`), `HOST_PAGE_BOARD`
 * (`roadmap`, the quickstart's board) and `HOST_PAGE_PORT` (`3002`; `0` picks a free one).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HostPageConfig, hostPageHandler, type SignedInUser } from './backend';

/** The user your product has signed in; in this example always the same one. */
export const DEMO_USER: SignedInUser = {
  userId: 'customer-42',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
};

export interface RunningHostPage {
  /** The page's address: `localhost`, another site than the service on 127.0.0.1, as in production. */
  url: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` (0: any free one). */
export async function startHostPage(config: HostPageConfig, port: number): Promise<RunningHostPage> {
  const server = createServer(hostPageHandler(config));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const MISSING_KEY = `EMBED_API_KEY is not set: the host page needs your API key to create sessions.
Give it through the environment, for example:
  EMBED_API_KEY=esk_… npm run example:host-page
(create a key with \`npm run admin -- create-api-key\`, see docs/quickstart.md). The key stays on this
server: the page in the browser only ever receives embed URLs.`;

/** The configuration from the environment, or the problems that stop the start, each in a sentence. */
export function hostPageEnv(
  env: Record<string, string | undefined>,
): { config: HostPageConfig; port: number } | { problems: string[] } {
  const apiKey = env.EMBED_API_KEY?.trim() ?? '';
  if (apiKey === '') return { problems: [MISSING_KEY] };
  const problems: string[] = [];
  if (!apiKey.startsWith('esk_'))
    problems.push('EMBED_API_KEY does not look like an API key: keys start with esk_.');
  const apiUrl = env.EMBED_API_URL?.trim() || 'http://127.0.0.1:3000';
  const api = URL.canParse(apiUrl) ? new URL(apiUrl) : undefined;
  // The base URL goes into the page's CSP, so it is an http(s) origin and a plain path, nothing more.
  if (
    !api ||
    !['http:', 'https:'].includes(api.protocol) ||
    api.username ||
    api.password ||
    api.search ||
    api.hash ||
    !/^[A-Za-z0-9._~/-]*$/.test(api.pathname)
  ) {
    problems.push(
      `EMBED_API_URL must be the service's http(s) base URL, such as http://127.0.0.1:3000, not "${apiUrl}".`,
    );
  }
  const boardId = env.HOST_PAGE_BOARD?.trim() || 'roadmap';
  const portText = env.HOST_PAGE_PORT?.trim() || '3002';
  const port = Number(portText);
  if (!/^\d{1,5}$/.test(portText) || port > 65535)
    problems.push(`HOST_PAGE_PORT must be a port (0-65535), not "${portText}".`);
  if (problems.length > 0 || !api) return { problems };
  const apiBaseUrl = `${api.origin}${api.pathname.replace(/\/+$/, '')}`;
  return { config: { apiBaseUrl, apiKey, boardId, user: DEMO_USER }, port };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const read = hostPageEnv(process.env);
  if ('problems' in read) {
    console.error(read.problems.join('\n'));
    process.exit(1);
  }
  const { config, port } = read;
  const running = await startHostPage(config, port).catch((error: NodeJS.ErrnoException) => {
    console.error(
      error.code === 'EADDRINUSE'
        ? `Port ${port} is already in use. Set HOST_PAGE_PORT to a free port.`
        : `Cannot start: ${error.message}`,
    );
    process.exit(1);
  });
  const { userId, firstName, lastName } = config.user;
  console.log(`Host page example running
  Open in a browser  ${running.url}
  Embed service      ${config.apiBaseUrl}   (EMBED_API_URL)
  Board              ${config.boardId}   (HOST_PAGE_BOARD)
  Signed-in user     ${userId}, ${firstName} ${lastName}

Each page view creates a session with your API key, which stays in this process. Ctrl-C stops it.`);
  const stop = () => void running.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
