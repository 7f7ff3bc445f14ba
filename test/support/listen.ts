import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A test's server listening on a free port of 127.0.0.1. */
export interface Listening {
  endpoint: string;
  port: number;
  /** Ends the connections still open, then stops listening. */
  close(): Promise<void>;
}

/** Starts `server` on a free port of 127.0.0.1 (port 0: never a fixed port). */
export async function listenOnFreePort(server: Server): Promise<Listening> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
