import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import {
  AWS_CALL_LIMITS,
  type AwsCallLimits,
  awsClientSettings,
  isTransientAwsError,
  SDK_LOGGER_MIDDLEWARE,
} from '#lib/platform/aws-clients';
import { runWithDeadline } from '#lib/platform/deadline';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { startUnansweringServer } from '#test/support/fault-proxy';

/** The production limits, scaled down so that a test waits tenths of a second, not seconds. */
const SHORT: AwsCallLimits = { connectionTimeoutMs: 50, requestTimeoutMs: 100, maxAttempts: 3 };

/** A client built as every adapter's is, against a service that accepts connections and never answers. */
let silent: Awaited<ReturnType<typeof startUnansweringServer>>;
let db: ReturnType<typeof createDocumentClient>;

beforeAll(async () => {
  silent = await startUnansweringServer();
  db = createDocumentClient({ endpoint: silent.endpoint, region: 'local' }, SHORT);
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

describe('the limits of every AWS call', () => {
  it('are 0.5 s to connect, 1 s to answer and 3 attempts in production', () => {
    expect(AWS_CALL_LIMITS).toEqual({ connectionTimeoutMs: 500, requestTimeoutMs: 1_000, maxAttempts: 3 });
  });

  it('fail a call that gets no answer after its attempts, each given up at its timeout, as an outage', async () => {
    const before = silent.requests();
    const { error, ms } = await failure(get);
    expect(error.name).toBe('TimeoutError');
    expect(isTransientAwsError(error)).toBe(true);
    expect(silent.requests() - before).toBe(SHORT.maxAttempts);
    // Each attempt waited its full timeout: the timeout fires, it is not only a warning.
    expect(ms).toBeGreaterThanOrEqual(SHORT.maxAttempts * SHORT.requestTimeoutMs - 20);
  });

  it('stop at the request deadline, without a retry after it', async () => {
    const before = silent.requests();
    const { error } = await failure(() => runWithDeadline(Date.now() + 50, get));
    expect(error.name).toBe('DeadlineExceededError');
    expect(isTransientAwsError(error)).toBe(true);
    // The one attempt ended at the deadline (DeadlineExceededError), not at its own timeout (TimeoutError).
    expect(silent.requests() - before).toBe(1);
  });

  it('do not even send a call once the deadline has passed', async () => {
    const before = silent.requests();
    const { error } = await failure(() => runWithDeadline(Date.now() - 1, get));
    expect(error.name).toBe('DeadlineExceededError');
    expect(silent.requests() - before).toBe(0);
  });

  it('leave the waits between attempts to the SDK’s standard backoff in production', () => {
    const settings = awsClientSettings({ region: 'eu-west-1' });
    expect(settings).not.toHaveProperty('retryStrategy');
    expect(settings.maxAttempts).toBe(3);
  });

  it.each([
    ['throttled', 'THROTTLING'],
    ['timed-out', 'TRANSIENT'],
  ] as const)(
    'wait retryDelayMs before each retry of a %s attempt when a test sets it, for as many attempts',
    async (_, errorType) => {
      const { retryStrategy } = awsClientSettings({ region: 'eu-west-1' }, { ...SHORT, retryDelayMs: 7 });
      if (!retryStrategy) throw new Error('no retry strategy for a retryDelayMs');
      vi.useFakeTimers();
      try {
        let token = await retryStrategy.acquireInitialRetryToken('dynamodb');
        for (let retry = 1; retry < SHORT.maxAttempts; retry++) {
          let granted = false;
          const next = retryStrategy.refreshRetryTokenForRetry(token, { errorType }).then((renewed) => {
            granted = true;
            return renewed;
          });
          await vi.advanceTimersByTimeAsync(6);
          expect(granted).toBe(false);
          await vi.advanceTimersByTimeAsync(1);
          expect(granted).toBe(true);
          token = await next;
        }
        await expect(retryStrategy.refreshRetryTokenForRetry(token, { errorType })).rejects.toThrow(
          'No retry token available',
        );
      } finally {
        vi.useRealTimers();
      }
    },
  );

  it('keep the SDK’s own HTTP handler and bound attempts through the public middleware stack', async () => {
    // No subclass of a class whose internals can change with an SDK upgrade.
    expect(Object.getPrototypeOf(await db.config.requestHandler)).toBe(NodeHttpHandler.prototype);
    expect(db.middlewareStack.identify()).toContainEqual(
      expect.stringMatching(/^requestDeadline - finalizeRequest/),
    );
  });
});

describe('no copy of each answer for a logger', () => {
  const names = (stack: { identify(): string[] }) => stack.identify().map((entry) => entry.split(' - ')[0]);

  it("leaves out the SDK's logger middleware, which filters and copies every answer even for no logger", () => {
    expect(names(db.middlewareStack)).not.toContain(SDK_LOGGER_MIDDLEWARE);
    // Still there beside it: the deadline of every attempt.
    expect(names(db.middlewareStack)).toContain('requestDeadline');
  });

  it('names a middleware the SDK really registers, so an SDK that renames it fails here', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const plain = new DynamoDBClient({ region: 'local' });
    try {
      expect(names(plain.middlewareStack)).toContain(SDK_LOGGER_MIDDLEWARE);
    } finally {
      plain.destroy();
    }
  });
});

describe('isTransientAwsError', () => {
  it.each(['throttled', 'throttling', 'internal', 'http503', 'connectionRefused', 'timeout'] as const)(
    'counts %s as an outage worth a 503',
    (kind) => {
      expect(isTransientAwsError(dynamoErrors[kind]())).toBe(true);
    },
  );

  it.each([
    'RequestLimitExceeded',
    'ServiceUnavailable',
    'RequestTimeout',
    'RequestTimeoutException',
    // SQS, EventBridge and KMS.
    'RequestThrottled',
    'InternalFailure',
    'ServiceUnavailableException',
    'KMSInternalException',
    'DependencyTimeoutException',
  ])('counts an error named %s as an outage', (name) => {
    expect(isTransientAwsError(Object.assign(new Error('x'), { name }))).toBe(true);
  });

  it.each(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'])(
    'counts the network error %s',
    (code) => {
      expect(isTransientAwsError(Object.assign(new Error('socket'), { code }))).toBe(true);
    },
  );

  it.each(['conditionFailed', 'validation', 'accessDenied'] as const)(
    'does not count %s, which is a problem with the request',
    (kind) => {
      expect(isTransientAwsError(dynamoErrors[kind]())).toBe(false);
    },
  );

  it('does not count non-errors', () => {
    expect(isTransientAwsError('ProvisionedThroughputExceededException')).toBe(false);
    expect(isTransientAwsError(undefined)).toBe(false);
  });
});
