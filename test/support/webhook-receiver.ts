import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventActor, RoutedEvent, SessionEventType } from '#lib/domain/events';
import { eventSequence } from '#lib/domain/events';
import type { SessionView } from '#lib/domain/session';
import type { Tenant } from '#lib/domain/tenant';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver as a customer would run one: a real HTTP server (port 0) that records every request,
 * and answers what `respond` says (200 by default).
 */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Resolves once `count` requests came to `path` (any path when absent); rejects after `timeoutMs`. */
  waitFor(count: number, path?: string, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  respond: (request: ReceivedWebhook, nth: number) => number = () => 200,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      const nth = received.filter((r) => r.path === request.path).length;
      res.writeHead(respond(request, nth)).end();
      for (const waiter of waiters.splice(0)) waiter();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const matching = (path?: string) => received.filter((r) => path === undefined || r.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    waitFor: (count, path, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`expected ${count} webhooks at ${path ?? 'any path'}, got ${matching(path).length}`),
            ),
          timeoutMs,
        );
        const check = () => {
          if (matching(path).length >= count) {
            clearTimeout(timer);
            resolve(matching(path));
          } else waiters.push(check);
        };
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Verifies a delivery as Standard Webhooks tells a receiver to, with nothing but node:crypto: HMAC-SHA256
 * over `{webhook-id}.{webhook-timestamp}.{body}` with the base64-decoded secret after `whsec_`, compared
 * in constant time with each `v1,` signature of the header, and a timestamp within five minutes.
 */
export function verifiedByReceiver(
  secret: string,
  request: ReceivedWebhook,
  nowSeconds = Date.now() / 1000,
): boolean {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  const signatures = String(request.headers['webhook-signature'] ?? '').split(' ');
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest();
  return signatures.some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** A routed event of `session` as part A's derivation makes them: the test's stand-in for the change feed. */
export function routedEvent(
  session: SessionView,
  type: SessionEventType,
  owner: { userId: string; keyId?: string; tenant?: Tenant },
  actor: EventActor = { type: 'api_key', ...(owner.keyId ? { keyId: owner.keyId } : {}) },
): RoutedEvent {
  return {
    event: {
      id: `evt_${session.id.replaceAll('-', '')}_${eventSequence(type)}`,
      type,
      occurredAt: new Date().toISOString(),
      sequence: eventSequence(type),
      data: { session, actor },
    },
    ownerUserId: owner.userId,
    sessionId: session.id,
    boardId: session.boardId,
    // The session's tenant: its key owner unless the test says otherwise.
    tenant: owner.tenant ?? { kind: 'keyOwner', id: owner.userId },
  };
}
