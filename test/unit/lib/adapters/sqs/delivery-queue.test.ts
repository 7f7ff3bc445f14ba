import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  type DeliveryMessage,
  type DeliveryQueueDeps,
  handleDeliveryBatch,
  parseDeliveryMessage,
  SQS_MAX_DELAY_SECONDS,
  SqsDeliveryScheduler,
  sqsBatches,
} from '#lib/adapters/sqs/delivery-queue';
import { DELIVERY_QUEUE_SOURCE } from '#lib/definitions/background';
import type { Board } from '#lib/domain/board';
import { WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND } from '#lib/domain/destinations';
import type { SessionEventType } from '#lib/domain/events';
import type { IdTokenSigner, PairwiseSubjects, WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import type { SessionView } from '#lib/domain/session';
import { formatWebhookSecret, type WebhookEndpoint } from '#lib/domain/webhook';
import { createMetrics, METRICS_NAMESPACE } from '#lib/platform/metrics';
import {
  BackChannelLogoutSink,
  LOGOUT_EXHAUSTED_METRIC,
  type LogoutDelivery,
  type LogoutDeps,
} from '#lib/use-cases/back-channel-logout';
import {
  AWS_RETRY_SECONDS,
  EXHAUSTED_METRIC,
  type HttpPost,
  type WebhookDelivery,
  WebhookSink,
} from '#lib/use-cases/webhook-delivery';
import {
  FakeBoards,
  FakeDestinationRateLimit,
  FakeSessions,
  sequenceRandom,
  VISIBLE_SUBJECTS,
} from '#test/support/fakes';
import { APP_BOARD } from '#test/support/fixtures';
import { LOGOUT_CANDIDATES } from '#test/support/logout-events';
import { memoryLogger } from '#test/support/logs';
import { sqsClientAnswering } from '#test/support/sqs-mock';
import { routedEvent } from '#test/support/webhook-receiver';

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

const BOARD = APP_BOARD;
const LOGOUT: LogoutDelivery = {
  eventId: 'evt_2',
  sessionId: 'sess-1',
  boardId: BOARD.boardId,
  userId: 'customer-42',
  attempt: 0,
};
/** A signer that shows what it signed: header and claims base64url-encoded, then a fake signature. */
const TOKENS: IdTokenSigner & PairwiseSubjects = {
  sign: async (claims) =>
    `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`,
  ...VISIBLE_SUBJECTS,
};

/**
 * A fake SQS delivery queue: SendMessage (and each entry of SendMessageBatch) puts a message, visible
 * `DelaySeconds` after the fake clock's now; `next` takes the earliest visible message and moves the
 * clock to it, as time passing would.
 */
function fakeQueue(startIso = '2026-03-01T00:00:00.000Z') {
  let now = Date.parse(startIso);
  const clock = { now: () => new Date(now) };
  const waiting: Array<{ visibleAt: number; body: string; delay: number }> = [];
  const sent: Array<{ QueueUrl: unknown; DelaySeconds: number; message: DeliveryMessage }> = [];
  const put = (queueUrl: unknown, body: string, delay: number) => {
    waiting.push({ visibleAt: now + delay * 1000, body, delay });
    sent.push({ QueueUrl: queueUrl, DelaySeconds: delay, message: JSON.parse(body) });
  };
  const call = sqsClientAnswering(async (operation, input) => {
    if (operation === 'SendMessageBatch') {
      const entries = input.Entries as Array<{ Id: string; MessageBody: string; DelaySeconds: number }>;
      for (const entry of entries) put(input.QueueUrl, entry.MessageBody, entry.DelaySeconds);
      return { Successful: entries.map((entry) => ({ Id: entry.Id })), Failed: [] };
    }
    expect(operation).toBe('SendMessage');
    put(input.QueueUrl, input.MessageBody as string, input.DelaySeconds as number);
    return { MessageId: `m${sent.length}` };
  });
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

function harness(post: HttpPost, endpoints: WebhookEndpoint[] = [ENDPOINT], boards: Board[] = [BOARD]) {
  const queue = fakeQueue();
  const posted: Array<{ url: string; body: string; webhookId: string | undefined }> = [];
  const metricLines: string[] = [];
  const attempts: number[] = [];
  const webhooks: WebhookRepository = {
    create: async (e) => e,
    get: async (owner, id) => endpoints.find((e) => e.ownerUserId === owner && e.id === id),
    list: async (owner) => endpoints.filter((e) => e.ownerUserId === owner),
    delete: async () => false,
    rotateSecret: async () => undefined,
  };
  const secrets: WebhookSecrets = { secretOf: async () => formatWebhookSecret(Buffer.alloc(32, 7)) };
  const { logger, lines } = memoryLogger();
  const scheduler = new SqsDeliveryScheduler(queue.call, QUEUE_URL, queue.clock);
  const recordedPost: HttpPost = async (...args) => {
    attempts.push(queue.now());
    posted.push({ url: args[0], body: args[2], webhookId: args[1]['webhook-id'] });
    return post(...args);
  };
  const metrics = createMetrics({ service: 'webhook-delivery', sink: (line) => metricLines.push(line) });
  const logouts: LogoutDeps = {
    boards: new FakeBoards(boards),
    tokens: async () => TOKENS,
    issuer: 'https://embed.example.com',
    stageAppUrl: undefined,
    appUrlRule: { allowLoopbackHttp: false },
    scheduler: scheduler.logouts,
    post: recordedPost,
    clock: queue.clock,
    random: sequenceRandom(),
    logger,
    metrics,
    retrySeconds: AWS_RETRY_SECONDS,
  };
  const deps: DeliveryQueueDeps = {
    webhooks,
    secrets,
    hostRate: new FakeDestinationRateLimit(queue.clock, WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND),
    scheduler,
    post: recordedPost,
    clock: queue.clock,
    logger,
    metrics,
    retrySeconds: AWS_RETRY_SECONDS,
    logouts,
    fanOut: {
      sessions: new FakeSessions(),
      boards: logouts.boards,
      stageAppUrl: undefined,
      appUrlRule: { allowLoopbackHttp: false },
      queue: scheduler,
      logger,
    },
  };
  /** Runs the delivery function on every message until the queue is empty. */
  const drain = async () => {
    for (let body = queue.next(), n = 1; body !== undefined; body = queue.next(), n++) {
      const result = await handleDeliveryBatch(deps, [{ messageId: `m${n}`, body }]);
      expect(result.batchItemFailures).toEqual([]);
    }
  };
  return { deps, queue, attempts, posted, metricLines, lines, drain };
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
    const attemptsSent = queue.sent.flatMap((s) => ('delivery' in s.message ? [s.message.delivery] : []));
    expect(attemptsSent).toHaveLength(queue.sent.length);
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

  it('carries a delivery’s first-queued time in its message, and refuses one whose time is not a time', async () => {
    const { deps, attempts } = harness(async () => 204);
    const firstQueuedAt = '2026-03-01T12:00:00.000Z';
    const carried = JSON.stringify({ delivery: { ...DELIVERY, firstQueuedAt } });
    expect(parseDeliveryMessage(carried)).toEqual({ delivery: { ...DELIVERY, firstQueuedAt } });
    const malformed = [
      { delivery: { ...DELIVERY, firstQueuedAt: 'yesterday' } },
      { delivery: { ...DELIVERY, firstQueuedAt: 1_772_366_400_000 } },
    ];
    expect(
      await handleDeliveryBatch(deps, [
        ...malformed.map((body, n) => ({ messageId: `m${n}`, body: JSON.stringify(body) })),
        { messageId: 'ok', body: carried },
      ]),
    ).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }] });
    expect(attempts).toHaveLength(1);
  });

  it('fails the message when re-enqueueing a retry fails, so SQS offers the attempt again', async () => {
    const { deps, queue } = harness(async () => 500);
    await deps.scheduler.schedule(DELIVERY, 0);
    const body = queue.next() as string;
    const broken = {
      ...deps,
      scheduler: new SqsDeliveryScheduler(
        sqsClientAnswering(async () => Promise.reject(new Error('SQS down'))),
        QUEUE_URL,
        queue.clock,
      ),
    };
    expect(await handleDeliveryBatch(broken, [{ messageId: 'm1', body }])).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm1' }],
    });
  });
});

/** An owner's endpoints, all subscribed to `session.created`, each on its own host. */
const endpointsOf = (owner: string, count: number): WebhookEndpoint[] =>
  Array.from({ length: count }, (_, n) => ({
    ...ENDPOINT,
    id: `whe_${owner.padEnd(16, '0')}${String(n).padStart(16, '0')}`,
    ownerUserId: owner,
    url: `https://hooks-${n}.${owner}.example.com/in`,
  }));
const CREATED = (owner: string, n = 1) =>
  routedEvent(
    { id: `6f1c2b4e-0000-4000-8000-${String(n).padStart(12, '0')}`, boardId: 'board-1' } as SessionView,
    'session.created',
    { userId: owner },
  );

/** An SQS client that counts its calls and the most it had in flight at once, answering after `hold`. */
function countingSqs(hold: () => Promise<void> = async () => undefined) {
  const counts = { calls: 0, inFlight: 0, mostInFlight: 0, messages: [] as DeliveryMessage[] };
  const client = sqsClientAnswering(async (operation, input) => {
    counts.calls += 1;
    counts.inFlight += 1;
    counts.mostInFlight = Math.max(counts.mostInFlight, counts.inFlight);
    await hold();
    counts.inFlight -= 1;
    if (operation === 'SendMessageBatch') {
      const entries = input.Entries as Array<{ Id: string; MessageBody: string }>;
      counts.messages.push(...entries.map((entry) => JSON.parse(entry.MessageBody)));
      return { Successful: entries.map((entry) => ({ Id: entry.Id })), Failed: [] };
    }
    counts.messages.push(JSON.parse(input.MessageBody as string));
    return { MessageId: 'm' };
  });
  return { client, counts };
}

describe('handing events from the pipeline to webhook delivery', () => {
  it.each([16, 4_000])(
    'hands an event of an owner with %i endpoints over in one SQS call, reading no endpoint',
    async (endpointCount) => {
      const { client, counts } = countingSqs();
      const read: string[] = [];
      const { deps } = harness(async () => 204, endpointsOf('owner-a', endpointCount));
      const sink = new WebhookSink({
        handOffs: new SqsDeliveryScheduler(client, QUEUE_URL, deps.clock),
      });
      const listing = deps.webhooks.list;
      deps.webhooks.list = async (owner) => {
        read.push(owner);
        return listing(owner);
      };
      const routed = CREATED('owner-a');
      await sink.publish([routed]);
      expect(counts.calls).toBe(1);
      expect(read).toEqual([]);
      expect(counts.messages).toEqual([
        {
          webhookEvent: {
            eventId: routed.event.id,
            ownerUserId: 'owner-a',
            type: 'session.created',
            body: JSON.stringify(routed.event),
          },
        },
      ]);
    },
  );

  it('hands a stream batch of 25 events over in three SendMessageBatch calls made side by side', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { client, counts } = countingSqs(() => released);
    const sink = new WebhookSink({
      handOffs: new SqsDeliveryScheduler(client, QUEUE_URL, { now: () => new Date() }),
    });
    const events = Array.from({ length: 25 }, (_, n) => CREATED(`owner-${n % 3}`, n));
    const publishing = sink.publish(events);
    await expect.poll(() => counts.inFlight).toBe(3);
    release();
    await publishing;
    expect(counts).toMatchObject({ calls: 3, mostInFlight: 3 });
    expect(counts.messages.map((m) => ('webhookEvent' in m ? m.webhookEvent.eventId : ''))).toEqual(
      events.map((e) => e.event.id),
    );
  });

  it('expands a hand-off into one delivery per endpoint of its owner subscribed to its type, ten to a call', async () => {
    const endpoints = [
      ...endpointsOf('owner-a', 16),
      { ...endpointsOf('owner-a', 17)[16], events: ['session.revoked'] } as WebhookEndpoint,
      ...endpointsOf('owner-b', 3),
    ];
    const { deps, queue, posted, drain } = harness(async () => 204, endpoints);
    const routed = CREATED('owner-a');
    await new WebhookSink({ handOffs: deps.scheduler }).publish([routed]);
    const handOff = queue.next() as string;
    const batchCalls = queue.sent.length;
    expect(await handleDeliveryBatch(deps, [{ messageId: 'h', body: handOff }])).toEqual({
      batchItemFailures: [],
    });
    // 16 first attempts queued in two batches of at most ten.
    expect(queue.sent.length - batchCalls).toBe(16);
    await drain();
    expect(posted.map((p) => p.url).sort()).toEqual(
      endpointsOf('owner-a', 16)
        .map((e) => e.url)
        .sort(),
    );
    expect(new Set(posted.map((p) => p.body))).toEqual(new Set([JSON.stringify(routed.event)]));
  });

  it('expands the same hand-off offered twice into repeats the receiver recognises: the event id as webhook-id, per endpoint', async () => {
    const { deps, posted, drain } = harness(async () => 204, endpointsOf('owner-a', 3));
    const routed = CREATED('owner-a');
    const sink = new WebhookSink({ handOffs: deps.scheduler });
    // The stream record is handled again after a lost answer: the same event is handed off twice.
    await sink.publish([routed]);
    await sink.publish([routed]);
    await drain();
    expect(posted).toHaveLength(6);
    for (const endpoint of endpointsOf('owner-a', 3)) {
      const received = posted.filter((p) => p.url === endpoint.url);
      expect(received.map((p) => p.webhookId)).toEqual([routed.event.id, routed.event.id]);
      expect(new Set(received.map((p) => p.body)).size).toBe(1);
    }
  });

  it('expands a second owner’s event while the first owner’s is still being read', async () => {
    const { deps, queue } = harness(
      async () => 204,
      [...endpointsOf('owner-a', 16), ...endpointsOf('owner-b', 1)],
    );
    let releaseA: () => void = () => undefined;
    const heldA = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    const listing = deps.webhooks.list;
    deps.webhooks.list = async (owner) => {
      if (owner === 'owner-a') await heldA;
      return listing(owner);
    };
    await new WebhookSink({ handOffs: deps.scheduler }).publish([
      CREATED('owner-a', 1),
      CREATED('owner-b', 2),
    ]);
    const [first, second] = [queue.next() as string, queue.next() as string];
    const handling = handleDeliveryBatch(deps, [
      { messageId: 'a', body: first },
      { messageId: 'b', body: second },
    ]);
    const deliveriesFor = (owner: string) =>
      queue.sent.filter((s) => 'delivery' in s.message && s.message.delivery.ownerUserId === owner).length;
    await expect.poll(() => deliveriesFor('owner-b')).toBe(1);
    expect(deliveriesFor('owner-a')).toBe(0);
    releaseA();
    expect(await handling).toEqual({ batchItemFailures: [] });
    expect(deliveriesFor('owner-a')).toBe(16);
  });

  it('keeps a failing endpoint to its own deliveries: the hand-off succeeds and the others are delivered', async () => {
    const endpoints = endpointsOf('owner-a', 3);
    const failing = endpoints[0]?.url;
    const { deps, queue, posted } = harness(async (url) => (url === failing ? 500 : 204), endpoints);
    await new WebhookSink({ handOffs: deps.scheduler }).publish([CREATED('owner-a')]);
    expect(await handleDeliveryBatch(deps, [{ messageId: 'h', body: queue.next() as string }])).toEqual({
      batchItemFailures: [],
    });
    for (let n = 0; n < 3; n++) {
      const body = queue.next() as string;
      expect(await handleDeliveryBatch(deps, [{ messageId: `d${n}`, body }])).toEqual({
        batchItemFailures: [],
      });
    }
    expect(posted.map((p) => p.url).sort()).toEqual(endpoints.map((e) => e.url).sort());
    // The failing endpoint's retry waits in the queue on its own.
    const retry = JSON.parse(queue.next() as string) as DeliveryMessage;
    expect('delivery' in retry && retry.delivery).toMatchObject({ endpointId: endpoints[0]?.id, attempt: 1 });
  });

  it('refuses a hand-off message that is not well formed, so it ends in the dead-letter queue', async () => {
    const { deps } = harness(async () => 204);
    const malformed = [
      { webhookEvent: { eventId: 'evt_1', ownerUserId: 'owner-a', type: 'session.nope', body: '{}' } },
      { webhookEvent: { eventId: 'evt_1', ownerUserId: '', type: 'session.created', body: '{}' } },
      { webhookEvent: { eventId: 'evt_1', ownerUserId: 'owner-a', type: 'session.created' } },
      {
        webhookEvent: { eventId: 'evt_1', ownerUserId: 'o', type: 'session.created', body: '{}' },
        delivery: DELIVERY,
      },
    ];
    expect(
      await handleDeliveryBatch(
        deps,
        malformed.map((body, n) => ({ messageId: `m${n}`, body: JSON.stringify(body) })),
      ),
    ).toEqual({ batchItemFailures: malformed.map((_, n) => ({ itemIdentifier: `m${n}` })) });
  });
});

describe('the per-host bound on the delivery queue', () => {
  it('delivers every one of 12 owners’ 16 endpoints on one host, never more than the bound in one second', async () => {
    const owners = Array.from({ length: 12 }, (_, n) => `owner-${n}`);
    const endpoints = owners.flatMap((owner) =>
      endpointsOf(owner, 16).map((e, n) => ({ ...e, url: `https://victim.example/${owner}/${n}` })),
    );
    const { deps, queue, attempts, posted, drain } = harness(async () => 204, endpoints);
    await new WebhookSink({ handOffs: deps.scheduler }).publish(owners.map((owner, n) => CREATED(owner, n)));
    await drain();
    // 192 deliveries, all sent, none twice: the ones over the bound waited for a later second.
    expect(posted).toHaveLength(192);
    expect(new Set(posted.map((p) => p.url)).size).toBe(192);
    const perSecond = new Map<number, number>();
    for (const at of attempts)
      perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND);
    expect(perSecond.size).toBeGreaterThanOrEqual(Math.ceil(192 / WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND));
    // Every wait was a message of the queue, whose delays SQS accepts.
    for (const { DelaySeconds } of queue.sent)
      expect(DelaySeconds).toBeLessThanOrEqual(SQS_MAX_DELAY_SECONDS);
  });
});

describe('batches of the delivery queue', () => {
  const work = (bodyBytes: number) => ({
    work: { delivery: { ...DELIVERY, body: 'x'.repeat(bodyBytes) } },
    delaySeconds: 0,
  });

  it('holds at most ten messages, and at most the queue’s message size in all', () => {
    expect(sqsBatches(Array.from({ length: 25 }, () => work(10))).map((b) => b.length)).toEqual([10, 10, 5]);
    // Eight messages of 30 KB fill 256 KiB: the ninth starts the next batch.
    const sizes = sqsBatches(Array.from({ length: 10 }, () => work(30_000)));
    expect(sizes.map((b) => b.length)).toEqual([8, 2]);
    for (const batch of sizes)
      expect(batch.reduce((sum, m) => sum + Buffer.byteLength(m.body), 0)).toBeLessThanOrEqual(
        DELIVERY_QUEUE_SOURCE.maxMessageBytes,
      );
  });
});

const view = (boardId: string) =>
  ({ id: LOGOUT.sessionId, boardId, userId: LOGOUT.userId }) as unknown as SessionView;
const ended = (type: SessionEventType, boardId = BOARD.boardId) =>
  routedEvent(view(boardId), type, { userId: 'owner-a' });

describe('back-channel logout through the delivery queue', () => {
  it('queues one logout message per revoked or expired session of a board with a logout URL, holding no token or secret', async () => {
    const { deps, queue } = harness(
      async () => 200,
      [ENDPOINT],
      [BOARD, { ...BOARD, boardId: 'board-plain', logoutUrl: undefined }],
    );
    const sink = new BackChannelLogoutSink({ ...deps.logouts, scheduler: deps.scheduler.logouts });
    await sink.publish(LOGOUT_CANDIDATES.map(([type, boardId]) => ended(type, boardId)));
    expect(queue.sent.map((s) => [s.DelaySeconds, Object.keys(s.message)])).toEqual([
      [0, ['logout']],
      [0, ['logout']],
    ]);
    for (const { message } of queue.sent) {
      expect('logout' in message && message.logout).toEqual({
        eventId: expect.stringMatching(/^evt_/),
        sessionId: LOGOUT.sessionId,
        boardId: BOARD.boardId,
        userId: LOGOUT.userId,
        tenant: { kind: 'keyOwner', id: 'owner-a' },
        attempt: 0,
      });
    }
  });

  it('queues nothing for a board without a logout URL', async () => {
    const { deps, queue } = harness(async () => 200, [ENDPOINT], [{ ...BOARD, logoutUrl: undefined }]);
    await new BackChannelLogoutSink({ ...deps.logouts, scheduler: deps.scheduler.logouts }).publish([
      ended('session.revoked'),
      ended('session.expired'),
    ]);
    expect(queue.sent).toEqual([]);
  });

  it('signs the logout token when the message is handled, and POSTs it to the board’s logout URL', async () => {
    const { deps, posted, drain } = harness(async () => 200);
    await deps.scheduler.logouts.schedule(LOGOUT, 0);
    await drain();
    expect(posted.map((p) => p.url)).toEqual([BOARD.logoutUrl]);
    const token = String(new URLSearchParams(posted[0]?.body).get('logout_token'));
    expect(decodeJwt(token)).toMatchObject({
      iss: 'https://embed.example.com',
      aud: 'https://board.acme.com',
      sub: 'sub(organization:org-a,customer-42)',
      sid: LOGOUT.sessionId,
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    });
  });

  it('retries a logout answered with a non-2xx on the webhook schedule, for more than 24 hours, a new token each time', async () => {
    const { deps, queue, attempts, posted, metricLines, drain } = harness(async () => 500);
    await deps.scheduler.logouts.schedule(LOGOUT, 0);
    const start = queue.now();
    await drain();
    expect(attempts).toHaveLength(AWS_RETRY_SECONDS.length + 1);
    attempts.slice(1).forEach((at, i) => {
      const gap = (at - (attempts[i] as number)) / 1000;
      expect(gap).toBeGreaterThanOrEqual(AWS_RETRY_SECONDS[i] as number);
      expect(gap).toBeLessThan((AWS_RETRY_SECONDS[i] as number) + 2);
    });
    expect(((attempts.at(-1) as number) - start) / 3_600_000).toBeGreaterThanOrEqual(24);
    for (const { message } of queue.sent) expect(Object.keys(message)).toContain('logout');
    const jtis = posted.map((p) => decodeJwt(String(new URLSearchParams(p.body).get('logout_token'))).jti);
    expect(new Set(jtis).size).toBe(posted.length);
    const counted = metricLines
      .map((l) => JSON.parse(l))
      .filter((m) => m[LOGOUT_EXHAUSTED_METRIC] !== undefined);
    expect(counted).toHaveLength(1);
  });

  it('drops the logout once the board’s logout URL is cleared, and reports a malformed logout message', async () => {
    const { deps, posted } = harness(async () => 200, [ENDPOINT], [{ ...BOARD, logoutUrl: undefined }]);
    const body = JSON.stringify({ logout: LOGOUT });
    expect(await handleDeliveryBatch(deps, [{ messageId: 'm1', body }])).toEqual({ batchItemFailures: [] });
    expect(posted).toEqual([]);
    const malformed = [
      JSON.stringify({ logout: { ...LOGOUT, userId: 42 } }),
      JSON.stringify({ logout: LOGOUT, delivery: DELIVERY }),
      JSON.stringify({ logout: { ...LOGOUT, tenant: { kind: 'admin', id: 'x' } } }),
    ];
    expect(
      await handleDeliveryBatch(
        deps,
        malformed.map((b, i) => ({ messageId: `bad${i}`, body: b })),
      ),
    ).toEqual({
      batchItemFailures: [{ itemIdentifier: 'bad0' }, { itemIdentifier: 'bad1' }, { itemIdentifier: 'bad2' }],
    });
  });
});
