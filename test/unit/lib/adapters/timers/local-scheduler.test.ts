/**
 * The local runtime's timer scheduler when an attempt throws (DynamoDB or a key file failing, say): the
 * delivery is logged and run again, as the AWS delivery queue offers a failed message again, and dropped
 * with an error line only after the queue's receive limit. Timers are fake: no test waits.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOCAL_REDELIVERY_SECONDS, TimerDeliveryScheduler } from '#lib/adapters/timers/local-scheduler';
import { DELIVERY_QUEUE_SOURCE } from '#lib/definitions/background';
import { PUBLIC_DESTINATIONS } from '#lib/domain/destinations';
import { StorageUnavailableError } from '#lib/domain/errors';
import type { RoutedEvent } from '#lib/domain/events';
import type { WebhookRepository } from '#lib/domain/ports';
import { formatWebhookSecret, type WebhookEndpoint } from '#lib/domain/webhook';
import type { WebhookDelivery } from '#lib/use-cases/webhook-delivery';
import { localBackChannelLogout } from '#local/back-channel-logout';
import { localWebhookDelivery } from '#local/webhook-delivery';
import { FakeBoards, FakeDestinationRateLimit, FakeSessions } from '#test/support/fakes';
import { APP_BOARD } from '#test/support/fixtures';
import { memoryLogger } from '#test/support/logs';
import { routedEvent } from '#test/support/webhook-receiver';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const delivery = (n = 1): WebhookDelivery => ({
  eventId: `evt_${n}`,
  ownerUserId: 'owner-a',
  endpointId: 'whe_1',
  body: '{"secret-looking":"body"}',
  attempt: 0,
});

function scheduler(run: (d: WebhookDelivery) => Promise<unknown>) {
  const logs = memoryLogger();
  const timers = new TimerDeliveryScheduler(run, {
    logger: logs.logger,
    contextOf: ({ eventId, endpointId, attempt }) => ({ eventId, endpointId, attempt: attempt + 1 }),
  });
  return { timers, lines: logs.lines };
}

describe('the local delivery scheduler, when an attempt throws', () => {
  it('logs the failure and runs the same delivery again after the redelivery delay', async () => {
    const run = vi
      .fn<(d: WebhookDelivery) => Promise<unknown>>()
      .mockRejectedValueOnce(new StorageUnavailableError())
      .mockResolvedValue('delivered');
    const { timers, lines } = scheduler(run);
    await timers.schedule(delivery(), 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(1);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'error',
        message: 'delivery failed to be handled; offered again',
        eventId: 'evt_1',
        endpointId: 'whe_1',
        attempt: 1,
        handling: 1,
        retryInSeconds: LOCAL_REDELIVERY_SECONDS,
        errorName: 'StorageUnavailableError',
      }),
    ]);
    // Nothing sooner than the delay, then the same delivery, unchanged.
    await vi.advanceTimersByTimeAsync(LOCAL_REDELIVERY_SECONDS * 1000 - 1);
    expect(run).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(2);
    expect(run.mock.calls[1]?.[0]).toEqual(delivery());
    expect(lines()).toHaveLength(1);
    // The body is never logged.
    expect(JSON.stringify(lines())).not.toContain('secret-looking');
  });

  it('drops a delivery that throws on every try after the queue’s receive limit, with an error line', async () => {
    const run = vi.fn(async () => {
      throw new Error('key file unreadable');
    });
    const { timers, lines } = scheduler(run);
    await timers.schedule(delivery(), 0);
    await vi.advanceTimersByTimeAsync(60 * 60 * 1000);
    expect(run).toHaveBeenCalledTimes(DELIVERY_QUEUE_SOURCE.maxReceiveCount);
    const logged = lines();
    expect(logged).toHaveLength(DELIVERY_QUEUE_SOURCE.maxReceiveCount);
    expect(logged.every((line) => line.level === 'error')).toBe(true);
    expect(logged.at(-1)).toMatchObject({
      message: `delivery failed to be handled ${DELIVERY_QUEUE_SOURCE.maxReceiveCount} times; dropped (on AWS: the dead-letter queue)`,
      eventId: 'evt_1',
      handling: DELIVERY_QUEUE_SOURCE.maxReceiveCount,
      errorMessage: 'key file unreadable',
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drops the redeliveries still waiting when it closes', async () => {
    const run = vi.fn(async () => {
      throw new Error('failing');
    });
    const { timers } = scheduler(run);
    await timers.schedule(delivery(), 0);
    await vi.advanceTimersByTimeAsync(0);
    await timers.close();
    await vi.advanceTimersByTimeAsync(60 * 60 * 1000);
    expect(run).toHaveBeenCalledTimes(1);
  });
});

describe('local webhook delivery when attempts throw', () => {
  const endpoint: WebhookEndpoint = {
    id: 'whe_00000000000000000000000000000001',
    ownerUserId: 'owner-a',
    url: 'https://hooks.example.com/in',
    events: ['session.created'],
    description: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    createdByKeyId: 'key-1',
  };

  it('still delivers every one of 1,000 events whose first attempt threw', async () => {
    // The first attempt of each delivery throws (an overloaded DynamoDB, say), the next one goes through.
    const failedOnce = new Set<string>();
    const webhooks: WebhookRepository = {
      create: async (e) => e,
      list: async () => [endpoint],
      get: async () => endpoint,
      delete: async () => true,
      rotateSecret: async () => undefined,
    };
    const posted: string[] = [];
    const { logger, lines } = memoryLogger();
    const local = localWebhookDelivery({
      webhooks,
      secrets: { secretOf: async () => formatWebhookSecret(Buffer.alloc(32, 1)) },
      // The per-host bound is not what this test is about: every delivery is let through at once.
      hostRate: { admit: async () => 0 },
      retrySeconds: [1, 2, 4],
      logger,
      metrics: { count: () => undefined },
      destinations: PUBLIC_DESTINATIONS,
      post: async (_url, headers) => {
        const id = String(headers['webhook-id']);
        if (!failedOnce.has(id)) {
          failedOnce.add(id);
          throw new StorageUnavailableError();
        }
        posted.push(id);
        return 200;
      },
    });
    const session = { id: 's', boardId: 'b', userId: 'u' } as never;
    const events = Array.from({ length: 1_000 }, (_, i) => {
      const routed = routedEvent(session, 'session.created', { userId: 'owner-a' });
      return { ...routed, event: { ...routed.event, id: `evt_${i}` } } as RoutedEvent;
    });
    await local.sink.publish(events);
    await vi.advanceTimersByTimeAsync(LOCAL_REDELIVERY_SECONDS * 1000 + 1);
    expect(new Set(posted).size).toBe(1_000);
    expect(
      lines().filter((line) => line.message === 'delivery failed to be handled; offered again'),
    ).toHaveLength(1_000);
    await local.close();
  });
});

describe('local webhook delivery, shaped as the delivery queue', () => {
  const onHost = (n: number): WebhookEndpoint => ({
    id: `whe_${String(n).padStart(32, '0')}`,
    ownerUserId: 'owner-a',
    url: `https://victim.example/${n}`,
    events: ['session.created'],
    description: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    createdByKeyId: 'key-1',
  });

  function local(endpoints: WebhookEndpoint[], perHostPerSecond: number, list?: WebhookRepository['list']) {
    let now = Date.parse('2026-03-01T12:00:00.000Z');
    const clock = { now: () => new Date(now) };
    const posted: string[] = [];
    const { logger, lines } = memoryLogger();
    const delivery = localWebhookDelivery({
      webhooks: {
        create: async (e) => e,
        list: list ?? (async (owner) => endpoints.filter((e) => e.ownerUserId === owner)),
        get: async (_owner, id) => endpoints.find((e) => e.id === id),
        delete: async () => true,
        rotateSecret: async () => undefined,
      },
      secrets: { secretOf: async () => formatWebhookSecret(Buffer.alloc(32, 1)) },
      hostRate: new FakeDestinationRateLimit(clock, perHostPerSecond),
      retrySeconds: [1, 2, 4],
      logger,
      metrics: { count: () => undefined },
      destinations: PUBLIC_DESTINATIONS,
      post: async (url) => {
        posted.push(url);
        return 204;
      },
    });
    /** Moves the limiter's clock and the timers on together. */
    const advance = async (ms: number) => {
      now += ms;
      await vi.advanceTimersByTimeAsync(ms);
    };
    return { delivery, posted, lines, advance };
  }
  const created = () =>
    routedEvent({ id: 's', boardId: 'b' } as never, 'session.created', { userId: 'owner-a' });

  it('expands a hand-off into the owner’s deliveries and holds a host to its bound a second, sending the rest later', async () => {
    const endpoints = [1, 2, 3, 4, 5].map(onHost);
    const { delivery, posted, advance, lines } = local(endpoints, 2);
    await delivery.sink.publish([created()]);
    await advance(10);
    expect(posted).toHaveLength(2);
    await advance(1_000);
    expect(posted).toHaveLength(4);
    await advance(1_000);
    expect(posted.sort()).toEqual(endpoints.map((e) => e.url).sort());
    expect(
      lines().filter((line) => line.message === 'webhook delivery delayed: its host is at its rate limit'),
    ).not.toHaveLength(0);
    await delivery.close();
  });

  it('offers a hand-off whose endpoints could not be read again, as the queue offers its message again', async () => {
    const endpoints = [onHost(1)];
    let reads = 0;
    const { delivery, posted, advance, lines } = local(endpoints, 50, async () => {
      reads += 1;
      if (reads === 1) throw new StorageUnavailableError();
      return endpoints;
    });
    await delivery.sink.publish([created()]);
    await advance(10);
    expect(posted).toEqual([]);
    expect(
      lines().filter((line) => line.message === 'delivery failed to be handled; offered again'),
    ).toHaveLength(1);
    await advance(LOCAL_REDELIVERY_SECONDS * 1000);
    expect(posted).toEqual([endpoints[0]?.url]);
    await delivery.close();
  });
});

describe('local back-channel logout when reading the board throws', () => {
  it('logs the logout by its session and board, reads again and sends it', async () => {
    const boards = new FakeBoards([APP_BOARD]);
    const posted: string[] = [];
    const { logger, lines } = memoryLogger();
    const local = localBackChannelLogout({
      boards,
      sessions: new FakeSessions([]),
      tokens: async () => ({
        sign: async () => 'header.claims.signature',
        subjectOf: async () => 'sub',
        tenantIdOf: async () => 'tid',
      }),
      issuer: 'https://embed.example.com',
      stageAppUrl: undefined,
      appUrlRule: { allowLoopbackHttp: false },
      retrySeconds: [1],
      logger,
      metrics: { count: () => undefined },
      destinations: PUBLIC_DESTINATIONS,
      post: async (url) => {
        posted.push(url);
        return 200;
      },
    });
    const session = { id: 'sess-1', boardId: APP_BOARD.boardId, userId: 'customer-42' } as never;
    await local.sink.publish([routedEvent(session, 'session.revoked', { userId: 'owner-a' })]);
    // The attempt's own read of the board fails once.
    vi.spyOn(boards, 'get').mockRejectedValueOnce(new StorageUnavailableError());
    await vi.advanceTimersByTimeAsync(0);
    expect(posted).toEqual([]);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'error',
        message: 'delivery failed to be handled; offered again',
        sessionId: 'sess-1',
        boardId: APP_BOARD.boardId,
        attempt: 1,
        errorName: 'StorageUnavailableError',
      }),
    ]);
    await vi.advanceTimersByTimeAsync(LOCAL_REDELIVERY_SECONDS * 1000);
    expect(posted).toEqual([APP_BOARD.logoutUrl]);
    await local.close();
  });
});
