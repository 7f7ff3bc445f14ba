import { describe, expect, it } from 'vitest';
import type { AwsJsonCall } from '#lib/aws/json-protocol';
import type { WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import { formatWebhookSecret, type WebhookEndpoint } from '#lib/domain/webhook';
import { createMetrics, METRICS_NAMESPACE } from '#lib/platform/metrics';
import {
  AWS_RETRY_SECONDS,
  type DeliveryDeps,
  EXHAUSTED_METRIC,
  type HttpPost,
  type WebhookDelivery,
} from '#lib/webhooks/delivery';
import {
  type DeliveryMessage,
  handleDeliveryBatch,
  SQS_MAX_DELAY_SECONDS,
  SqsDeliveryScheduler,
} from '#lib/webhooks/sqs';
import { memoryLogger } from '#test/support/logs';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries';
const ENDPOINT: WebhookEndpoint = {
  id: 'whe_00000000000000000000000000000001',
  ownerUserId: 'owner-a',
  url: 'https://hooks.example.com/in',
  events: ['session.created'],
  description: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdByKeyId: 'key-1',
};
const DELIVERY: WebhookDelivery = {
  eventId: 'evt_1',
  ownerUserId: ENDPOINT.ownerUserId,
  endpointId: ENDPOINT.id,
  body: '{"id":"evt_1"}',
  attempt: 0,
};

/**
 * A fake SQS delivery queue: SendMessage puts a message, visible `DelaySeconds` after the fake clock's
 * now; `next` takes the earliest visible message and moves the clock to it, as time passing would.
 */
function fakeQueue(startIso = '2026-03-01T00:00:00.000Z') {
  let now = Date.parse(startIso);
  const clock = { now: () => new Date(now) };
  const waiting: Array<{ visibleAt: number; body: string; delay: number }> = [];
  const sent: Array<{ QueueUrl: unknown; DelaySeconds: number; message: DeliveryMessage }> = [];
  const call: AwsJsonCall = async (operation, input) => {
    expect(operation).toBe('SendMessage');
    const delay = input.DelaySeconds as number;
    waiting.push({ visibleAt: now + delay * 1000, body: input.MessageBody as string, delay });
    sent.push({
      QueueUrl: input.QueueUrl,
      DelaySeconds: delay,
      message: JSON.parse(input.MessageBody as string),
    });
    return { MessageId: `m${sent.length}` };
  };
  return {
    clock,
    call,
    sent,
    size: () => waiting.length,
    now: () => now,
    next() {
      waiting.sort((a, b) => a.visibleAt - b.visibleAt);
      const message = waiting.shift();
      if (!message) return undefined;
      now = Math.max(now, message.visibleAt);
      return message.body;
    },
  };
}

function harness(post: HttpPost, endpoints: WebhookEndpoint[] = [ENDPOINT]) {
  const queue = fakeQueue();
  const metricLines: string[] = [];
  const attempts: number[] = [];
  const webhooks: WebhookRepository = {
    create: async (e) => e,
    get: async (owner, id) => endpoints.find((e) => e.ownerUserId === owner && e.id === id),
    list: async () => endpoints,
    delete: async () => false,
  };
  const secrets: WebhookSecrets = { secretOf: async () => formatWebhookSecret(Buffer.alloc(32, 7)) };
  const { logger, lines } = memoryLogger();
  const deps: DeliveryDeps & { scheduler: SqsDeliveryScheduler } = {
    webhooks,
    secrets,
    scheduler: new SqsDeliveryScheduler(queue.call, QUEUE_URL, queue.clock),
    post: async (...args) => {
      attempts.push(queue.now());
      return post(...args);
    },
    clock: queue.clock,
    logger,
    metrics: createMetrics({ service: 'webhook-delivery', sink: (line) => metricLines.push(line) }),
    retrySeconds: AWS_RETRY_SECONDS,
  };
  /** Runs the delivery function on every message until the queue is empty. */
  const drain = async () => {
    for (let body = queue.next(), n = 1; body !== undefined; body = queue.next(), n++) {
      const result = await handleDeliveryBatch(deps, [{ messageId: `m${n}`, body }]);
      expect(result.batchItemFailures).toEqual([]);
    }
  };
  return { deps, queue, attempts, metricLines, lines, drain };
}

describe('the SQS delivery scheduler', () => {
  it('sends a delay SQS accepts as is, with no due time', async () => {
    const { deps, queue } = harness(async () => 200);
    await deps.scheduler.schedule(DELIVERY, 300);
    expect(queue.sent).toEqual([{ QueueUrl: QUEUE_URL, DelaySeconds: 300, message: { delivery: DELIVERY } }]);
  });

  it('caps a longer delay at 15 minutes and carries the time the attempt is due', async () => {
    const { deps, queue } = harness(async () => 200);
    await deps.scheduler.schedule(DELIVERY, 7_200);
    expect(queue.sent).toEqual([
      {
        QueueUrl: QUEUE_URL,
        DelaySeconds: SQS_MAX_DELAY_SECONDS,
        message: { delivery: DELIVERY, notBefore: new Date(queue.now() + 7_200_000).toISOString() },
      },
    ]);
  });
});

describe('webhook delivery from the queue', () => {
  it('delivers a first message at once, and sends nothing more', async () => {
    const { deps, queue, attempts, drain } = harness(async () => 204);
    await deps.scheduler.schedule(DELIVERY, 0);
    await drain();
    expect(attempts).toHaveLength(1);
    expect(queue.sent).toHaveLength(1);
  });

  it('retries a failing receiver on the AWS schedule, chaining messages of at most 15 minutes, for more than 24 hours', async () => {
    const { deps, queue, attempts, drain } = harness(async () => 503);
    await deps.scheduler.schedule(DELIVERY, 0);
    const start = queue.now();
    await drain();
    expect(attempts).toHaveLength(AWS_RETRY_SECONDS.length + 1);
    const gaps = attempts.slice(1).map((at, i) => (at - (attempts[i] as number)) / 1000);
    // Each wait is the schedule's; SQS rounding adds nothing (the due time is exact to the second).
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(AWS_RETRY_SECONDS[i] as number);
      expect(gap).toBeLessThan((AWS_RETRY_SECONDS[i] as number) + 2);
    });
    expect(((attempts.at(-1) as number) - start) / 3_600_000).toBeGreaterThanOrEqual(24);
    for (const { DelaySeconds } of queue.sent)
      expect(DelaySeconds).toBeLessThanOrEqual(SQS_MAX_DELAY_SECONDS);
    // A 10-hour wait is forty 15-minute messages.
    expect(queue.sent.length).toBeGreaterThan(AWS_RETRY_SECONDS.length * 2);
    // Every attempt of the chain carries the same event and body, and counts its failures.
    const attemptsSent = queue.sent.map((s) => s.message.delivery);
    expect(new Set(attemptsSent.map((d) => d.eventId))).toEqual(new Set(['evt_1']));
    expect(new Set(attemptsSent.map((d) => d.body))).toEqual(new Set([DELIVERY.body]));
    expect(Math.max(...attemptsSent.map((d) => d.attempt))).toBe(AWS_RETRY_SECONDS.length);
  });

  it('counts a delivery given up after its last attempt once, with the metric line the local delivery writes', async () => {
    const { deps, metricLines, lines, drain } = harness(async () => undefined);
    await deps.scheduler.schedule(DELIVERY, 0);
    await drain();
    const counted = metricLines.map((l) => JSON.parse(l)).filter((m) => m[EXHAUSTED_METRIC] !== undefined);
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({ service: 'webhook-delivery', [EXHAUSTED_METRIC]: 1 });
    expect(counted[0]._aws.CloudWatchMetrics[0].Namespace).toBe(METRICS_NAMESPACE);
    expect(lines().filter((l) => String(l.message).includes('given up'))).toHaveLength(1);
  });

  it('stops a chain when the endpoint is deleted meanwhile: no attempt, no message', async () => {
    const endpoints = [ENDPOINT];
    const { deps, queue, attempts, drain } = harness(async () => 500, endpoints);
    await deps.scheduler.schedule(DELIVERY, 0);
    const body = queue.next() as string;
    await handleDeliveryBatch(deps, [{ messageId: 'm1', body }]);
    endpoints.length = 0;
    await drain();
    expect(attempts).toHaveLength(1);
    expect(queue.size()).toBe(0);
  });

  it('reports a message it cannot handle (malformed, or a failing dependency) in batchItemFailures, and handles the others', async () => {
    const { deps, queue, attempts } = harness(async () => 200);
    await deps.scheduler.schedule(DELIVERY, 0);
    const good = queue.next() as string;
    const failing = {
      ...deps,
      webhooks: { ...deps.webhooks, get: async () => Promise.reject(new Error('DynamoDB down')) },
    };
    const reported: unknown[] = [];
    expect(
      await handleDeliveryBatch(
        deps,
        [
          { messageId: 'bad', body: '{"not":"a delivery"}' },
          { messageId: 'good', body: good },
          { messageId: 'junk', body: 'not json' },
        ],
        (_error, context) => reported.push(context),
      ),
    ).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad' }, { itemIdentifier: 'junk' }] });
    expect(attempts).toHaveLength(1);
    expect(reported).toEqual([{ messageId: 'bad' }, { messageId: 'junk' }]);
    expect(await handleDeliveryBatch(failing, [{ messageId: 'again', body: good }])).toEqual({
      batchItemFailures: [{ itemIdentifier: 'again' }],
    });
  });

  it('fails the message when re-enqueueing a retry fails, so SQS offers the attempt again', async () => {
    const { deps, queue } = harness(async () => 500);
    await deps.scheduler.schedule(DELIVERY, 0);
    const body = queue.next() as string;
    const broken = {
      ...deps,
      scheduler: new SqsDeliveryScheduler(
        async () => Promise.reject(new Error('SQS down')),
        QUEUE_URL,
        queue.clock,
      ),
    };
    expect(await handleDeliveryBatch(broken, [{ messageId: 'm1', body }])).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm1' }],
    });
  });
});
