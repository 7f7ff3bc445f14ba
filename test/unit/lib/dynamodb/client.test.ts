import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, QueryCommand as WireQueryCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createDocumentClient,
  createDynamoClients,
  DYNAMODB_LIMITS,
  SDK_LOGGER_MIDDLEWARE,
} from '#lib/dynamodb/client';
import { isTransientDynamoError } from '#lib/dynamodb/errors';
import { runWithDeadline } from '#lib/platform/deadline';
import { startUnansweringServer } from '#test/support/fault-proxy';

/** The document client against a DynamoDB that accepts connections and never answers. */
let silent: Awaited<ReturnType<typeof startUnansweringServer>>;
let db: ReturnType<typeof createDocumentClient>;

beforeAll(async () => {
  silent = await startUnansweringServer();
  db = createDocumentClient({ endpoint: silent.endpoint, region: 'local' });
});
afterAll(async () => {
  db?.destroy();
  await silent?.close();
});

const get = () => db.send(new GetCommand({ TableName: 't', Key: { id: 'x' } }));

/** The rejection of `call`, and how long it took. */
async function failure(call: () => Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = performance.now();
  const error = await call().then(
    () => new Error('the call succeeded'),
    (e: Error) => e,
  );
  return { error, ms: performance.now() - started };
}

describe('document client: limits of every DynamoDB call', () => {
  it('uses 0.5 s to connect, 1 s to answer and 3 attempts in production', () => {
    expect(DYNAMODB_LIMITS).toEqual({ connectionTimeoutMs: 500, requestTimeoutMs: 1_000, maxAttempts: 3 });
  });

  it('fails a call that gets no answer after its 3 attempts of 1 s, as an outage', async () => {
    const before = silent.requests();
    const { error, ms } = await failure(get);
    expect(error.name).toBe('TimeoutError');
    expect(isTransientDynamoError(error)).toBe(true);
    expect(silent.requests() - before).toBe(3);
    // Each attempt waited its full second: the timeout fires, it is not only a warning.
    expect(ms).toBeGreaterThanOrEqual(3 * DYNAMODB_LIMITS.requestTimeoutMs - 50);
  });

  it('stops at the request deadline, without a retry after it', async () => {
    const before = silent.requests();
    const { error } = await failure(() => runWithDeadline(Date.now() + 200, get));
    expect(error.name).toBe('DeadlineExceededError');
    expect(isTransientDynamoError(error)).toBe(true);
    // The one attempt ended at the deadline (DeadlineExceededError), not at its own timeout (TimeoutError).
    expect(silent.requests() - before).toBe(1);
  });

  it('keeps the SDK’s own HTTP handler and bounds attempts through the public middleware stack', async () => {
    // No subclass of a class whose internals can change with an SDK upgrade.
    expect(Object.getPrototypeOf(await db.config.requestHandler)).toBe(NodeHttpHandler.prototype);
    expect(db.middlewareStack.identify()).toContainEqual(
      expect.stringMatching(/^requestDeadline - finalizeRequest/),
    );
  });

  it('does not even call DynamoDB once the deadline has passed', async () => {
    const before = silent.requests();
    const { error } = await failure(() => runWithDeadline(Date.now() - 1, get));
    expect(error.name).toBe('DeadlineExceededError');
    expect(silent.requests() - before).toBe(0);
  });
});

describe('document client: no copy of each answer for a logger', () => {
  const names = (stack: { identify(): string[] }) => stack.identify().map((entry) => entry.split(' - ')[0]);

  it("leaves out the SDK's logger middleware, which filters and copies every answer even for no logger", () => {
    expect(names(db.middlewareStack)).not.toContain(SDK_LOGGER_MIDDLEWARE);
    // Still there beside it: the deadline of every attempt.
    expect(names(db.middlewareStack)).toContain('requestDeadline');
  });

  it('names a middleware the SDK really registers, so an SDK that renames it fails here', () => {
    const plain = new DynamoDBClient({ region: 'local' });
    try {
      expect(names(plain.middlewareStack)).toContain(SDK_LOGGER_MIDDLEWARE);
    } finally {
      plain.destroy();
    }
  });
});

/** A DynamoDB that answers every Query with one item holding the `:pk` it was asked for. */
async function startEchoingDynamo() {
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const asked = JSON.parse(body).ExpressionAttributeValues[':pk'];
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ Items: [{ pk: asked }], Count: 1, ScannedCount: 1 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the shard queries' client", () => {
  const names = (stack: { identify(): string[] }) => stack.identify().map((entry) => entry.split(' - ')[0]);

  it("shares the document client's request handler, deadline and lack of a logger middleware", async () => {
    const { db: documents, shardQueries } = createDynamoClients({ region: 'local', endpoint: undefined });
    expect(await shardQueries.config.requestHandler).toBe(await documents.config.requestHandler);
    expect(names(shardQueries.middlewareStack)).toContain('requestDeadline');
    expect(names(shardQueries.middlewareStack)).not.toContain(SDK_LOGGER_MIDDLEWARE);
    // The document client refuses a client that caches its middleware; its own stays uncached.
    expect(shardQueries.config.cacheMiddleware).toBe(true);
    expect(documents.config.cacheMiddleware).toBe(false);
  });

  it('resolves its middleware once per command class, and each query still sends its own input', async () => {
    const dynamo = await startEchoingDynamo();
    const { shardQueries } = createDynamoClients({ region: 'local', endpoint: dynamo.endpoint });
    const resolved = vi.spyOn(WireQueryCommand.prototype, 'resolveMiddleware');
    try {
      const keys = Array.from({ length: 16 }, (_, shard) => `scope#${shard}`);
      const query = (key: string) =>
        shardQueries.send(
          new WireQueryCommand({
            TableName: 't',
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': { S: key } },
          }),
        );
      // All at once, as a scope's shards are read, then once more after the first have settled.
      const answers = [...(await Promise.all(keys.map(query))), await query('scope#again')];
      expect(answers.map((answer) => answer.Items?.[0]?.pk?.S)).toEqual([...keys, 'scope#again']);
      expect(resolved).toHaveBeenCalledTimes(1);
      // The cached stack still runs every middleware per call: a spent deadline stops the next query.
      const before = dynamo.requests();
      const late = await runWithDeadline(Date.now() - 1, () => query('scope#late')).catch((e: Error) => e);
      expect((late as Error).name).toBe('DeadlineExceededError');
      expect(dynamo.requests()).toBe(before);
    } finally {
      resolved.mockRestore();
      shardQueries.destroy();
      await dynamo.close();
    }
  });
});
