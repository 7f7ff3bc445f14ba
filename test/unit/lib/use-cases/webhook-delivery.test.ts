import { describe, expect, it } from 'vitest';
import { OPERATOR_USER_ID, revokeAllEvent } from '#lib/adapters/dynamodb/change-events';
import {
  fairShareWaitSeconds,
  rateLimitedHostOf,
  rateLimitWaitSeconds,
  WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
  WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
} from '#lib/domain/destinations';
import { StorageUnavailableError } from '#lib/domain/errors';
import type { WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import type { SessionView } from '#lib/domain/session';
import { formatWebhookSecret, type WebhookEndpoint } from '#lib/domain/webhook';
import { signWebhook, verifyWebhookSignature } from '#lib/domain/webhook-signature';
import { createMetrics, METRICS_NAMESPACE } from '#lib/platform/metrics';
import {
  AWS_RETRY_SECONDS,
  attemptDelivery,
  type DeliveryDeps,
  deliveryHorizonSeconds,
  EXHAUSTED_METRIC,
  expandHandOff,
  HOST_RATE_LIMITED_METRIC,
  type HttpPost,
  isQueuedAttempt,
  MIN_DELIVERY_HORIZON_SECONDS,
  REFUSED_METRIC,
  UNCOUNTED_HOST_WAIT_SECONDS,
  type WebhookDelivery,
  type WebhookEventHandOff,
  WebhookSink,
} from '#lib/use-cases/webhook-delivery';
import { FakeDestinationRateLimit, fixedClock } from '#test/support/fakes';
import { memoryLogger } from '#test/support/logs';
import { routedEvent } from '#test/support/webhook-receiver';

const SECRET = formatWebhookSecret(Buffer.alloc(32, 7));

function endpoint(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: 'whe_00000000000000000000000000000001',
    ownerUserId: 'owner-a',
    url: 'https://hooks.example.com/in',
    events: ['session.created', 'session.revoked'],
    description: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    createdByKeyId: 'key-1',
    ...overrides,
  };
}

class MemoryWebhooks implements WebhookRepository {
  constructor(public items: WebhookEndpoint[]) {}
  async create(e: WebhookEndpoint) {
    this.items.push(e);
    return e;
  }
  async get(owner: string, id: string) {
    return this.items.find((e) => e.ownerUserId === owner && e.id === id);
  }
  async list(owner: string) {
    return this.items.filter((e) => e.ownerUserId === owner);
  }
  async delete(owner: string, id: string) {
    const before = this.items.length;
    this.items = this.items.filter((e) => !(e.ownerUserId === owner && e.id === id));
    return this.items.length < before;
  }
  async rotateSecret(): Promise<undefined> {
    throw new Error('delivery never rotates a secret');
  }
}

/** The secret of version 1, and one per later version: what a rotation moves an endpoint to. */
const secretOfVersion = (version: number) =>
  version === 1 ? SECRET : formatWebhookSecret(Buffer.alloc(32, 7 + version));
const secrets: WebhookSecrets = { secretOf: async (_id, version = 1) => secretOfVersion(version) };

function harness(options: {
  post: HttpPost;
  retrySeconds?: readonly number[];
  endpoints?: WebhookEndpoint[];
  perHostPerSecond?: number;
}) {
  const scheduled: Array<{ delivery: WebhookDelivery; delaySeconds: number }> = [];
  const metricLines: string[] = [];
  const { logger, lines } = memoryLogger();
  const clock = fixedClock('2026-03-01T12:00:00.000Z');
  const hostRate = new FakeDestinationRateLimit(
    clock,
    options.perHostPerSecond ?? WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
  );
  const deps: DeliveryDeps = {
    webhooks: new MemoryWebhooks(options.endpoints ?? [endpoint()]),
    secrets,
    hostRate,
    scheduler: {
      schedule: async (delivery, delaySeconds) => void scheduled.push({ delivery, delaySeconds }),
    },
    post: options.post,
    clock,
    logger,
    metrics: createMetrics({
      service: 'webhook-delivery',
      sink: (line) => metricLines.push(line),
      now: () => 1,
    }),
    retrySeconds: options.retrySeconds ?? [1, 2, 4],
  };
  return { deps, scheduled, metricLines, lines, hostRate };
}

const SESSION = { id: '6f1c2b4e-0000-4000-8000-000000000001', boardId: 'board-1' } as SessionView;
const delivery = (attempt = 0): WebhookDelivery => ({
  eventId: 'evt_1',
  ownerUserId: 'owner-a',
  endpointId: 'whe_00000000000000000000000000000001',
  body: '{"id":"evt_1"}',
  attempt,
  firstQueuedAt: '2026-03-01T12:00:00.000Z',
});

/** A hand-off queue that records what it was handed, one entry per call. */
function recordingHandOffs() {
  const calls: WebhookEventHandOff[][] = [];
  return {
    calls,
    handOffs: { handOff: async (events: readonly WebhookEventHandOff[]) => void calls.push([...events]) },
  };
}

describe('handing events to webhook delivery', () => {
  it('hands each owner’s event over once, with its type and JSON, all of one batch in one call', async () => {
    const { calls, handOffs } = recordingHandOffs();
    const a = routedEvent(SESSION, 'session.created', { userId: 'owner-a' });
    const b = routedEvent({ ...SESSION, id: '6f1c2b4e-0000-4000-8000-000000000002' }, 'session.revoked', {
      userId: 'owner-b',
    });
    await new WebhookSink({ handOffs }).publish([a, b]);
    expect(calls).toEqual([
      [
        {
          eventId: a.event.id,
          ownerUserId: 'owner-a',
          type: 'session.created',
          body: JSON.stringify(a.event),
        },
        {
          eventId: b.event.id,
          ownerUserId: 'owner-b',
          type: 'session.revoked',
          body: JSON.stringify(b.event),
        },
      ],
    ]);
  });

  it('expands a hand-off into one first attempt per endpoint of its owner subscribed to its type, and for no one else', async () => {
    const { deps } = harness({
      post: async () => 200,
      endpoints: [
        endpoint({ id: 'whe_a1' }),
        endpoint({ id: 'whe_a2', events: ['session.opened'] }),
        endpoint({ id: 'whe_a3' }),
        endpoint({ id: 'whe_b1', ownerUserId: 'owner-b' }),
      ],
    });
    const scheduled: WebhookDelivery[][] = [];
    const routed = routedEvent(SESSION, 'session.created', { userId: 'owner-a' });
    const body = JSON.stringify(routed.event);
    const queued = await expandHandOff(
      {
        webhooks: deps.webhooks,
        deliveries: { scheduleAll: async (all) => void scheduled.push([...all]) },
        clock: deps.clock,
      },
      { eventId: routed.event.id, ownerUserId: 'owner-a', type: 'session.created', body },
    );
    expect(queued).toBe(2);
    // Each carries when it was first queued: what bounds how long its host's limit may keep it.
    const firstQueuedAt = deps.clock.now().toISOString();
    expect(scheduled).toEqual([
      [
        {
          eventId: routed.event.id,
          ownerUserId: 'owner-a',
          endpointId: 'whe_a1',
          body,
          attempt: 0,
          firstQueuedAt,
        },
        {
          eventId: routed.event.id,
          ownerUserId: 'owner-a',
          endpointId: 'whe_a3',
          body,
          attempt: 0,
          firstQueuedAt,
        },
      ],
    ]);
  });

  it('queues nothing for an owner with no endpoint subscribed to the event', async () => {
    const { deps } = harness({
      post: async () => 200,
      endpoints: [endpoint({ events: ['session.opened'] })],
    });
    const scheduled: WebhookDelivery[] = [];
    const queued = await expandHandOff(
      {
        webhooks: deps.webhooks,
        deliveries: { scheduleAll: async (all) => void scheduled.push(...all) },
        clock: deps.clock,
      },
      { eventId: 'evt_1', ownerUserId: 'owner-a', type: 'session.created', body: '{}' },
    );
    expect([queued, scheduled]).toEqual([0, []]);
  });
});

/** Expands what the sink hands off, as the delivery worker would, into the deliveries it schedules. */
async function deliveriesOf(deps: DeliveryDeps, events: Parameters<WebhookSink['publish']>[0]) {
  const { calls, handOffs } = recordingHandOffs();
  await new WebhookSink({ handOffs }).publish(events);
  const scheduled: WebhookDelivery[] = [];
  for (const handOff of calls.flat())
    await expandHandOff(
      {
        webhooks: deps.webhooks,
        deliveries: { scheduleAll: async (all) => void scheduled.push(...all) },
        clock: deps.clock,
      },
      handOff,
    );
  return scheduled;
}

describe('webhook fan-out of a revoke-all’s sessions.revoked', () => {
  const notice = { scope: { userId: 'customer-1' }, revoked: 3, writtenAt: '2026-03-01T12:00:00.000Z' };
  const entry = (byUserId: string) => ({
    id: `entry-${byUserId}`,
    at: notice.writtenAt,
    byUserId,
    byKeyId: byUserId === OPERATOR_USER_ID ? null : 'key_a',
  });

  it('goes to the calling owner’s endpoints subscribed to it, and to no other owner’s', async () => {
    const { deps } = harness({
      post: async () => 200,
      endpoints: [
        endpoint({ id: 'whe_a1', events: ['sessions.revoked'] }),
        endpoint({ id: 'whe_a2', events: ['session.revoked'] }),
        endpoint({ id: 'whe_b1', ownerUserId: 'owner-b', events: ['sessions.revoked'] }),
      ],
    });
    const routed = revokeAllEvent(entry('owner-a'), notice);
    const scheduled = await deliveriesOf(deps, [routed]);
    expect(scheduled.map((d) => [d.endpointId, d.ownerUserId, d.body])).toEqual([
      ['whe_a1', 'owner-a', JSON.stringify(routed.event)],
    ]);
  });

  it('an operator’s is handed to no one: it is no tenant’s event', async () => {
    const { calls, handOffs } = recordingHandOffs();
    await new WebhookSink({ handOffs }).publish([revokeAllEvent(entry(OPERATOR_USER_ID), notice)]);
    expect(calls).toEqual([]);
  });
});

describe('the per-host bound of deliveries', () => {
  const onHost = (id: string, ownerUserId: string, url: string) => endpoint({ id, ownerUserId, url });
  const to = (endpointId: string, ownerUserId: string): WebhookDelivery => ({
    ...delivery(),
    endpointId,
    ownerUserId,
  });

  it('sends at most the bound to one host in a second, whoever’s endpoints they are; the rest wait, none is dropped', async () => {
    const posted: string[] = [];
    const { deps, scheduled, metricLines, lines } = harness({
      post: async (url) => {
        posted.push(url);
        return 204;
      },
      perHostPerSecond: 3,
      endpoints: [
        onHost('whe_a1', 'owner-a', 'https://victim.example/a'),
        onHost('whe_a2', 'owner-a', 'https://VICTIM.example:8443/b'),
        onHost('whe_b1', 'owner-b', 'https://victim.example/c'),
        onHost('whe_c1', 'owner-c', 'https://victim.example/d'),
        onHost('whe_c2', 'owner-c', 'https://victim.example/e'),
      ],
    });
    const deliveries = [
      to('whe_a1', 'owner-a'),
      to('whe_a2', 'owner-a'),
      to('whe_b1', 'owner-b'),
      to('whe_c1', 'owner-c'),
      to('whe_c2', 'owner-c'),
    ];
    const outcomes = [];
    for (const one of deliveries) outcomes.push(await attemptDelivery(deps, one));
    expect(outcomes).toEqual([
      'delivered',
      'delivered',
      'delivered',
      'host-rate-limited',
      'host-rate-limited',
    ]);
    expect(posted).toHaveLength(3);
    // Put back as they were: the same attempt (nothing was sent), due the next second.
    expect(scheduled).toEqual([
      { delivery: deliveries[3], delaySeconds: 1 },
      { delivery: deliveries[4], delaySeconds: 1 },
    ]);
    expect(metricLines.map((line) => JSON.parse(line)[HOST_RATE_LIMITED_METRIC])).toEqual([1, 1]);
    expect(
      lines().filter((line) => line.message === 'webhook delivery delayed: its host is at its rate limit'),
    ).toHaveLength(2);
  });

  it('sends another owner’s delivery in the very second one owner floods the host', async () => {
    const posted: string[] = [];
    const { deps, scheduled } = harness({
      post: async (url) => {
        posted.push(url);
        return 204;
      },
      endpoints: [
        onHost('whe_a1', 'owner-a', 'https://hooks.slack.example/a'),
        onHost('whe_b1', 'owner-b', 'https://hooks.slack.example/b'),
      ],
    });
    const flood = Array.from({ length: 60 }, (_, n) => ({
      ...to('whe_a1', 'owner-a'),
      eventId: `evt_a${n}`,
    }));
    const outcomes = [];
    for (const one of flood) outcomes.push(await attemptDelivery(deps, one));
    expect(await attemptDelivery(deps, to('whe_b1', 'owner-b'))).toBe('delivered');
    expect(outcomes.filter((outcome) => outcome === 'delivered')).toHaveLength(
      WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
    );
    expect(posted.filter((url) => url.endsWith('/b'))).toEqual(['https://hooks.slack.example/b']);
    // The flood waits for its own later seconds, a share's worth each: 10 wait 1 s, 10 wait 2 s, … 5 s.
    expect(scheduled.map(({ delaySeconds }) => delaySeconds)).toEqual(
      [1, 2, 3, 4, 5].flatMap((seconds) =>
        Array(WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND).fill(seconds),
      ),
    );
  });

  it('holds the host to its bound when many owners each stay within their share', async () => {
    const owners = Array.from({ length: 6 }, (_, n) => `owner-${n}`);
    const { deps } = harness({
      post: async () => 204,
      endpoints: owners.map((owner) => onHost(`whe_${owner}`, owner, 'https://hooks.slack.example/in')),
    });
    const outcomes = [];
    for (const owner of owners)
      for (let n = 0; n < WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND; n++)
        outcomes.push(await attemptDelivery(deps, { ...to(`whe_${owner}`, owner), eventId: `evt_${n}` }));
    expect(outcomes.filter((outcome) => outcome === 'delivered')).toHaveLength(
      WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
    );
    expect(
      outcomes.slice(WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND).every((o) => o === 'host-rate-limited'),
    ).toBe(true);
  });

  it('gives a flooding owner its share again each second, and never more', async () => {
    let now = Date.parse('2026-03-01T12:00:00.000Z');
    const clock = { now: () => new Date(now) };
    const limit = new FakeDestinationRateLimit(clock, WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND);
    const waits = async () => {
      const all = [];
      for (let n = 0; n < 15; n++) all.push(await limit.admit('hooks.slack.example', 'owner-a'));
      return all;
    };
    const first = await waits();
    now += 1_000;
    const second = await waits();
    for (const answers of [first, second]) {
      expect(answers.filter((wait) => wait === 0)).toHaveLength(
        WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
      );
    }
  });

  it('counts a delivery over its owner’s share against that owner only, never against the host', async () => {
    const counted: string[] = [];
    let ownerCount = 0;
    const counters = {
      owner: async () => {
        counted.push('owner');
        return ++ownerCount;
      },
      host: async () => {
        counted.push('host');
        return 1;
      },
    };
    const limits = { perHost: 50, perOwner: 2 };
    expect(await fairShareWaitSeconds(counters, limits)).toBe(0);
    expect(await fairShareWaitSeconds(counters, limits)).toBe(0);
    expect(await fairShareWaitSeconds(counters, limits)).toBe(1);
    expect(counted).toEqual(['owner', 'host', 'owner', 'host', 'owner']);
  });

  it('lets another host’s deliveries through while one host is at its bound', async () => {
    const { deps } = harness({
      post: async () => 204,
      perHostPerSecond: 1,
      endpoints: [
        onHost('whe_a1', 'owner-a', 'https://busy.example/a'),
        onHost('whe_a2', 'owner-a', 'https://busy.example/b'),
        onHost('whe_b1', 'owner-b', 'https://quiet.example/c'),
      ],
    });
    expect(await attemptDelivery(deps, to('whe_a1', 'owner-a'))).toBe('delivered');
    expect(await attemptDelivery(deps, to('whe_a2', 'owner-a'))).toBe('host-rate-limited');
    expect(await attemptDelivery(deps, to('whe_b1', 'owner-b'))).toBe('delivered');
  });

  it('puts a delivery back, sending nothing, when its host’s counter cannot be counted (DynamoDB throttling it)', async () => {
    const posted: string[] = [];
    const { deps, scheduled } = harness({
      post: async (url) => {
        posted.push(url);
        return 204;
      },
    });
    deps.hostRate = { admit: async () => Promise.reject(new StorageUnavailableError()) };
    expect(await attemptDelivery(deps, delivery())).toBe('host-rate-limited');
    expect(posted).toEqual([]);
    expect(scheduled).toEqual([{ delivery: delivery(), delaySeconds: UNCOUNTED_HOST_WAIT_SECONDS }]);
  });

  it('counts the host name without its port, as the URL parser writes it', () => {
    expect(rateLimitedHostOf('https://Hooks.Example.COM:8443/in')).toBe('hooks.example.com');
    expect(rateLimitedHostOf('https://2852039166/')).toBe('169.254.169.254');
    expect(rateLimitedHostOf('https://[0:0::1]:9/')).toBe('[::1]');
  });

  it('waits whole seconds in proportion to how far over the bound a delivery asked', () => {
    expect([1, 50, 51, 100, 101, 150, 151].map((n) => rateLimitWaitSeconds(n, 50))).toEqual([
      0, 0, 1, 1, 2, 2, 3,
    ]);
  });
});

describe('how long a delivery may wait for its host', () => {
  /** A clock the test moves: no test waits real time. */
  const movableClock = (iso: string) => {
    const clock = { at: Date.parse(iso), now: () => new Date(clock.at) };
    return clock;
  };

  it('spans the retry schedule, and at least a minute (a local schedule of 0 still waits)', () => {
    expect(deliveryHorizonSeconds(AWS_RETRY_SECONDS)).toBe(135_305);
    expect(deliveryHorizonSeconds(AWS_RETRY_SECONDS) / 3_600).toBeCloseTo(37.6, 1);
    expect(deliveryHorizonSeconds([1, 2, 4])).toBe(MIN_DELIVERY_HORIZON_SECONDS);
    expect(deliveryHorizonSeconds([0])).toBe(MIN_DELIVERY_HORIZON_SECONDS);
  });

  it('gives up a delivery its host’s limit would keep past the retry schedule’s span, as an exhausted retry', async () => {
    const posted: string[] = [];
    const { deps, scheduled, metricLines, lines } = harness({
      post: async (url) => {
        posted.push(url);
        return 204;
      },
      retrySeconds: AWS_RETRY_SECONDS,
    });
    const clock = movableClock('2026-03-01T12:00:00.000Z');
    deps.clock = clock;
    // Sustained overload: the host is at its limit every time the delivery asks, a minute's wait each.
    deps.hostRate = { admit: async () => 60 };
    let current: WebhookDelivery = { ...delivery(), firstQueuedAt: new Date(clock.at).toISOString() };
    const outcomes: string[] = [];
    for (let asked = 0; asked < 10_000; asked++) {
      const outcome = await attemptDelivery(deps, current);
      outcomes.push(outcome);
      if (outcome !== 'host-rate-limited') break;
      const next = scheduled.at(-1) as { delivery: WebhookDelivery; delaySeconds: number };
      current = next.delivery;
      clock.at += next.delaySeconds * 1_000;
    }
    expect(outcomes.at(-1)).toBe('exhausted');
    // Put back while the wait ends within the schedule's span, never past it.
    expect(outcomes.filter((outcome) => outcome === 'host-rate-limited')).toHaveLength(
      Math.floor(deliveryHorizonSeconds(AWS_RETRY_SECONDS) / 60),
    );
    expect(scheduled.every(({ delivery: d }) => d.firstQueuedAt === '2026-03-01T12:00:00.000Z')).toBe(true);
    expect(scheduled.every(({ delivery: d }) => d.attempt === 0)).toBe(true);
    expect(posted).toEqual([]);
    expect(metricLines.map((line) => JSON.parse(line)[EXHAUSTED_METRIC]).filter(Boolean)).toEqual([1]);
    expect(
      lines().filter(
        (line) =>
          line.level === 'warn' &&
          line.message ===
            'webhook delivery given up: its host stayed at its rate limit past the retry schedule',
      ),
    ).toHaveLength(1);
  });

  it('counts the span from the first queueing, through the retries the delivery already had', async () => {
    const { deps, scheduled } = harness({ post: async () => 204, retrySeconds: AWS_RETRY_SECONDS });
    const clock = movableClock('2026-03-03T01:00:00.000Z');
    deps.clock = clock;
    deps.hostRate = { admit: async () => 1 };
    // Queued 37 h 35 min ago, after its retries: one more second fits the span, …
    const queuedAt = clock.at - (deliveryHorizonSeconds(AWS_RETRY_SECONDS) - 1) * 1_000;
    const late = { ...delivery(7), firstQueuedAt: new Date(queuedAt).toISOString() };
    expect(await attemptDelivery(deps, late)).toBe('host-rate-limited');
    expect(scheduled).toEqual([{ delivery: late, delaySeconds: 1 }]);
    // … a second later none does.
    clock.at += 1_000;
    expect(await attemptDelivery(deps, late)).toBe('exhausted');
    expect(scheduled).toHaveLength(1);
  });

  it('starts the span at the first wait of a delivery queued before deliveries carried their time', async () => {
    const { deps, scheduled } = harness({ post: async () => 204, retrySeconds: AWS_RETRY_SECONDS });
    deps.hostRate = { admit: async () => 1 };
    const { firstQueuedAt: _, ...older } = delivery();
    expect(await attemptDelivery(deps, older)).toBe('host-rate-limited');
    expect(scheduled).toEqual([
      { delivery: { ...older, firstQueuedAt: deps.clock.now().toISOString() }, delaySeconds: 1 },
    ]);
  });

  it('keeps the first-queued time on a retry after a failed attempt', async () => {
    const { deps, scheduled } = harness({ post: async () => 503 });
    expect(await attemptDelivery(deps, delivery())).toBe('retrying');
    expect(scheduled[0]?.delivery.firstQueuedAt).toBe(delivery().firstQueuedAt);
  });
});

describe('one delivery attempt', () => {
  it('signs with the Standard Webhooks headers, and the signature verifies', async () => {
    let sent: Record<string, string> = {};
    const { deps } = harness({
      post: async (_url, headers) => {
        sent = headers;
        return 204;
      },
    });
    expect(await attemptDelivery(deps, delivery())).toBe('delivered');
    const timestamp = Date.parse('2026-03-01T12:00:00.000Z') / 1000;
    expect(sent['webhook-id']).toBe('evt_1');
    expect(sent['webhook-timestamp']).toBe(String(timestamp));
    expect(sent['webhook-signature']).toBe(signWebhook(SECRET, 'evt_1', timestamp, '{"id":"evt_1"}'));
    expect(
      verifyWebhookSignature(
        SECRET,
        'evt_1',
        timestamp,
        '{"id":"evt_1"}',
        `v1,bogus ${sent['webhook-signature']}`,
      ),
    ).toBe(true);
    expect(
      verifyWebhookSignature(SECRET, 'evt_1', timestamp, '{"id":"evt_2"}', sent['webhook-signature'] ?? ''),
    ).toBe(false);
  });

  it('signs with the new and the replaced secret during a rotation’s overlap: a receiver with either verifies', async () => {
    let sent: Record<string, string> = {};
    const { deps } = harness({
      post: async (_url, headers) => {
        sent = headers;
        return 204;
      },
      endpoints: [
        endpoint({ secretVersion: 2, previousSecret: { version: 1, until: '2026-03-01T12:00:00.001Z' } }),
      ],
    });
    await attemptDelivery(deps, delivery());
    const timestamp = Date.parse('2026-03-01T12:00:00.000Z') / 1000;
    const header = sent['webhook-signature'] ?? '';
    expect(header.split(' ')).toHaveLength(2);
    expect(header).toBe(signWebhook([secretOfVersion(2), SECRET], 'evt_1', timestamp, '{"id":"evt_1"}'));
    for (const secret of [secretOfVersion(2), SECRET])
      expect(verifyWebhookSignature(secret, 'evt_1', timestamp, '{"id":"evt_1"}', header)).toBe(true);
    expect(verifyWebhookSignature(secretOfVersion(3), 'evt_1', timestamp, '{"id":"evt_1"}', header)).toBe(
      false,
    );
  });

  it('signs with the new secret alone once the overlap has ended', async () => {
    let sent: Record<string, string> = {};
    const { deps } = harness({
      post: async (_url, headers) => {
        sent = headers;
        return 204;
      },
      endpoints: [
        endpoint({ secretVersion: 2, previousSecret: { version: 1, until: '2026-03-01T12:00:00.000Z' } }),
      ],
    });
    await attemptDelivery(deps, delivery());
    const timestamp = Date.parse('2026-03-01T12:00:00.000Z') / 1000;
    const header = sent['webhook-signature'] ?? '';
    expect(header).toBe(signWebhook(secretOfVersion(2), 'evt_1', timestamp, '{"id":"evt_1"}'));
    expect(verifyWebhookSignature(SECRET, 'evt_1', timestamp, '{"id":"evt_1"}', header)).toBe(false);
  });

  it('schedules a failed attempt again after the schedule’s delay for that attempt, with the same event', async () => {
    const { deps, scheduled } = harness({ post: async () => 500, retrySeconds: [1, 2, 4] });
    expect(await attemptDelivery(deps, delivery(1))).toBe('retrying');
    expect(scheduled).toEqual([{ delivery: delivery(2), delaySeconds: 2 }]);
  });

  it('treats no answer (a timeout, a refused connection) as a failed attempt', async () => {
    const { deps, scheduled } = harness({ post: async () => undefined });
    expect(await attemptDelivery(deps, delivery())).toBe('retrying');
    expect(scheduled).toHaveLength(1);
  });

  it('gives up after the last attempt and counts it in an EMF metric line, logging no secret or signature', async () => {
    const { deps, scheduled, metricLines, lines } = harness({ post: async () => 503, retrySeconds: [1] });
    expect(await attemptDelivery(deps, delivery(1))).toBe('exhausted');
    expect(scheduled).toEqual([]);
    expect(metricLines.map((line) => JSON.parse(line))).toEqual([
      {
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [
            {
              Namespace: METRICS_NAMESPACE,
              Dimensions: [['service']],
              Metrics: [{ Name: EXHAUSTED_METRIC, Unit: 'Count' }],
            },
          ],
        },
        service: 'webhook-delivery',
        [EXHAUSTED_METRIC]: 1,
      },
    ]);
    const logged = JSON.stringify(lines());
    expect(logged).not.toContain(SECRET.slice('whsec_'.length));
    expect(logged).not.toContain('v1,');
  });

  it('counts and logs a delivery whose destination is refused as it is sent, and never tries it again', async () => {
    const { deps, scheduled, metricLines, lines } = harness({
      post: async () => ({ refused: 'hooks.example.com resolves to 10.0.0.7, a private address' }),
    });
    expect(await attemptDelivery(deps, delivery())).toBe('refused');
    expect(scheduled).toEqual([]);
    expect(metricLines.map((line) => JSON.parse(line)[REFUSED_METRIC])).toEqual([1]);
    expect(lines()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'webhook delivery refused: its destination is not on the public internet; not sent',
        eventId: 'evt_1',
        endpointId: 'whe_00000000000000000000000000000001',
        reason: 'hooks.example.com resolves to 10.0.0.7, a private address',
      }),
    );
  });

  it('sends nothing to an endpoint deleted since the event was scheduled', async () => {
    let posts = 0;
    const { deps } = harness({
      post: async () => {
        posts++;
        return 200;
      },
      endpoints: [],
    });
    expect(await attemptDelivery(deps, delivery())).toBe('endpoint-deleted');
    expect(posts).toBe(0);
  });
});

describe('an attempt read back from the queue', () => {
  const queued = { eventId: 'evt_1', ownerUserId: 'owner-a', endpointId: 'whe_1', body: '{}', attempt: 2 };
  const textFields = ['eventId', 'ownerUserId', 'endpointId', 'body'] as const;

  it('is recognised when its named fields are text and its attempt an integer', () => {
    expect(isQueuedAttempt<WebhookDelivery>(queued, textFields)).toBe(true);
  });

  it.each([
    ['null', null],
    ['a string', 'evt_1'],
    ['one named field missing', { ...queued, body: undefined }],
    ['a named field that is not text', { ...queued, endpointId: 7 }],
    ['a fractional attempt', { ...queued, attempt: 1.5 }],
    ['an attempt in text', { ...queued, attempt: '2' }],
  ])('is refused with %s', (_case, value) => {
    expect(isQueuedAttempt<WebhookDelivery>(value, textFields)).toBe(false);
  });
});
