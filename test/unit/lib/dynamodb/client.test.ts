import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, DYNAMODB_LIMITS, SDK_LOGGER_MIDDLEWARE } from '#lib/dynamodb/client';
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
