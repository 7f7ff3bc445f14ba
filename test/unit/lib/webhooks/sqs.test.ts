import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Board } from '#lib/domain/board';
import type { SessionEventType } from '#lib/domain/events';
import type { IdTokenSigner, PairwiseSubjects, WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import type { SessionView } from '#lib/domain/session';
import { formatWebhookSecret, type WebhookEndpoint } from '#lib/domain/webhook';
import {
  BackChannelLogoutSink,
  LOGOUT_EXHAUSTED_METRIC,
  type LogoutDelivery,
  type LogoutDeps,
} from '#lib/logout/backchannel';
import { createMetrics, METRICS_NAMESPACE } from '#lib/platform/metrics';
import {
  AWS_RETRY_SECONDS,
  EXHAUSTED_METRIC,
  type HttpPost,
  type WebhookDelivery,
} from '#lib/webhooks/delivery';
import {
  type DeliveryMessage,
  type DeliveryQueueDeps,
  handleDeliveryBatch,
  SQS_MAX_DELAY_SECONDS,
  SqsDeliveryScheduler,
} from '#lib/webhooks/sqs';
import { FakeBoards, FakeSessions, sequenceRandom, VISIBLE_SUBJECTS } from '#test/support/fakes';
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
  const posted: Array<{ url: string; body: string }> = [];
  const metricLines: string[] = [];
  const attempts: number[] = [];
  const webhooks: WebhookRepository = {
    create: async (e) => e,
    get: async (owner, id) => endpoints.find((e) => e.ownerUserId === owner && e.id === id),
    list: async () => endpoints,
    delete: async () => false,
    rotateSecret: async () => undefined,
  };
  const secrets: WebhookSecrets = { secretOf: async () => formatWebhookSecret(Buffer.alloc(32, 7)) };
  const { logger, lines } = memoryLogger();
  const scheduler = new SqsDeliveryScheduler(queue.call, QUEUE_URL, queue.clock);
  const recordedPost: HttpPost = async (...args) => {
    attempts.push(queue.now());
    posted.push({ url: args[0], body: args[2] });
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
