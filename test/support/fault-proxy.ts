import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { listenOnFreePort } from './listen';
import { forwardTo, readAll, sendAnswer as send } from './upstream';

/**
 * What the proxy does to the DynamoDB requests a fault applies to:
 * - `hang`: accepts the request and never answers;
 * - `refuse`: closes its port, so connections are refused (ECONNREFUSED); for every request, whatever the
 *   scope, since a port refuses everyone;
 * - `reset`: accepts the request and resets the connection without an answer (ECONNRESET);
 * - `internal-error`: answers 500 `InternalServerError`, as DynamoDB does when it fails;
 * - `throttle`: answers 400 with a throttling error (`ProvisionedThroughputExceededException` unless `type`);
 * - `slow`: forwards the request and holds the answer back for `delayMs`;
 * - `lose-answer`: forwards the request (the write lands), then loses DynamoDB's answer once: the
 *   connection is reset, or the client gets a 500 `InternalServerError` instead; then the fault clears.
 * - `late-answer`: forwards the next `count` requests at once (their writes land) and holds each answer
 *   back `delayMs`, past the client's deadline, so the client gives up on a write that happened; then the
 *   fault clears.
 */
export type Fault =
  | { kind: 'hang' }
  | { kind: 'refuse' }
  | { kind: 'reset' }
  | { kind: 'internal-error' }
  | { kind: 'throttle'; type?: 'ProvisionedThroughputExceededException' | 'ThrottlingException' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'lose-answer'; then: 'reset' | 'internal-error' }
  | { kind: 'late-answer'; delayMs: number; count: number };

/** Which requests a fault applies to; every request when empty. */
export interface FaultScope {
  /** DynamoDB operation, such as `PutItem` (from the `X-Amz-Target` header). */
  operation?: string;
  /** Table name, from the request body. */
  table?: string;
}

/** One request the proxy saw, and what it did with it. */
export interface ProxiedRequest {
  operation: string;
  table: string | undefined;
  fault: Fault['kind'] | 'none';
  /** The bytes of DynamoDB's answer, once forwarded and answered (what a read brought back). */
  answerBytes?: number;
}

export interface FaultProxy {
  /** The proxy's URL, to use as the DynamoDB endpoint. */
  endpoint: string;
  /** Applies `fault` to the requests in `scope` from now on (replacing any fault before). */
  inject(fault: Fault, scope?: FaultScope): Promise<void>;
  /** Back to forwarding everything; hung requests are dropped and a refusing port opens again. */
  clear(): Promise<void>;
  /** Every request seen so far, oldest first. */
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

const JSON_TYPE = 'application/x-amz-json-1.0';

/**
 * A small HTTP proxy in front of a DynamoDB endpoint that injects faults on demand, so tests can see
 * what the service does when DynamoDB hangs, refuses, fails, throttles, is slow or loses an answer.
 */
export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const target = new URL(upstream);
  let fault: Fault | undefined;
  let scope: FaultScope = {};
  /** How many more requests a `late-answer` fault delays. */
  let lateLeft = 0;
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const hung = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    // An upstream that goes away mid-request (the test is closing) just drops this request.
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const table = tableOf(body);
    const applies =
      fault !== undefined &&
      (scope.operation === undefined || scope.operation === operation) &&
      (scope.table === undefined || scope.table === table);
    const active = applies ? fault : undefined;
    const seen: ProxiedRequest = { operation, table, fault: active?.kind ?? 'none' };
    requests.push(seen);
    switch (active?.kind) {
      case undefined:
      case 'refuse':
        return forward(req, body, res, seen);
      case 'hang':
        hung.add(res);
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'internal-error':
        return answerError(res, 500, 'InternalServerError', 'Internal server error');
      case 'throttle':
        return answerError(
          res,
          400,
          active.type ?? 'ProvisionedThroughputExceededException',
          'The level of configured provisioned throughput for the table was exceeded',
        );
      case 'slow': {
        const answer = await forwardTo(target, req, body);
        await new Promise((resolve) => setTimeout(resolve, active.delayMs));
        return send(res, answer);
      }
      case 'lose-answer': {
        await forwardTo(target, req, body);
        fault = undefined;
        if (active.then === 'reset') {
          req.socket.resetAndDestroy();
          return;
        }
        return answerError(res, 500, 'InternalServerError', 'Internal server error');
      }
      case 'late-answer': {
        lateLeft -= 1;
        if (lateLeft <= 0) fault = undefined;
        const answer = await forwardTo(target, req, body);
        await new Promise((resolve) => setTimeout(resolve, active.delayMs));
        // The client gave up long ago: the answer goes nowhere, as a late answer does.
        if (!res.destroyed) send(res, answer);
        return;
      }
    }
  }

  async function forward(
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    seen: ProxiedRequest,
  ): Promise<void> {
    try {
      const answer = await forwardTo(target, req, body);
      seen.answerBytes = answer.body.length;
      send(res, answer);
    } catch {
      res.destroy();
    }
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  const dropConnections = () => {
    for (const res of hung) res.destroy();
    hung.clear();
    for (const socket of sockets) socket.destroy();
  };

  const clear = async () => {
    const wasRefusing = fault?.kind === 'refuse';
    fault = undefined;
    scope = {};
    for (const res of hung) res.destroy();
    hung.clear();
    if (wasRefusing) {
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    }
  };

  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    clear,
    async inject(next, nextScope = {}) {
      await clear();
      fault = next;
      scope = nextScope;
      lateLeft = next.kind === 'late-answer' ? next.count : 0;
      if (next.kind === 'refuse') {
        const closed = new Promise((resolve) => server.close(resolve));
        dropConnections();
        await closed;
      }
    },
    async close() {
      fault = undefined;
      dropConnections();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}

function answerError(res: ServerResponse, status: number, type: string, message: string): void {
  const body = Buffer.from(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
  send(res, { status, headers: { 'content-type': JSON_TYPE }, body });
}

function tableOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { TableName?: unknown };
    return typeof parsed.TableName === 'string' ? parsed.TableName : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A server that accepts every connection and request and never answers: a DynamoDB that hangs. `requests`
 * counts what reached it (attempts, retries included).
 */
export async function startUnansweringServer(): Promise<{
  endpoint: string;
  requests: () => number;
  close(): Promise<void>;
}> {
  let count = 0;
  const server = createServer(() => {
    count += 1;
  });
  const { endpoint, close } = await listenOnFreePort(server);
  return { endpoint, requests: () => count, close };
}
