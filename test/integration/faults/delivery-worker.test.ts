import { createHash, randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import {
  DynamoDestinationRateLimit,
  HOST_RATE_KEY_PREFIX,
  ownerHostRatePartition,
} from '#lib/adapters/dynamodb/host-rates';
import { DynamoKeyringStore } from '#lib/adapters/dynamodb/keyring';
import { DynamoWebhookRepository } from '#lib/adapters/dynamodb/webhooks';
import {
  KEYRING_REFRESH_MS,
  KeyringPublicKeys,
  KeyringSigner,
  newKeyring,
} from '#lib/adapters/signing/keyring-keys';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { Board } from '#lib/domain/board';
import { WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND } from '#lib/domain/destinations';
import { StorageUnavailableError } from '#lib/domain/errors';
import type { Clock } from '#lib/domain/ports';
import { formatWebhookSecret, newWebhookId, type WebhookEndpoint } from '#lib/domain/webhook';
import { verifyWebhookSignature } from '#lib/domain/webhook-signature';
import { createMetrics } from '#lib/platform/metrics';
import { attemptLogout, type LogoutDelivery, type LogoutDeps } from '#lib/use-cases/back-channel-logout';
import {
  attemptDelivery,
  type DeliveryDeps,
  HOST_RATE_LIMITED_METRIC,
  type HttpPost,
  UNCOUNTED_HOST_WAIT_SECONDS,
  type WebhookDelivery,
} from '#lib/use-cases/webhook-delivery';
import { sequenceRandom } from '#test/support/fakes';
import type { Fault } from '#test/support/fault-proxy';
import { CountingKeyEncryption } from '#test/support/keyring';
import { memoryLogger } from '#test/support/logs';
import { lostAnswer } from '#test/support/lost-answers';
import { LATE_MS, SHORT_LIMITS } from '#test/support/short-aws-limits';
import { useTablesBehindProxy } from '#test/support/tables-behind-proxy';

/**
 * The delivery worker's two DynamoDB calls added last, failing on this run's engine: the per-host
 * delivery counter's UpdateItem (lib/adapters/dynamodb/host-rates.ts) before a webhook is sent, and the keyring's
 * GetItem (lib/adapters/dynamodb/keyring.ts) before a back-channel logout is signed. Whatever DynamoDB does, the
 * delivery is neither lost nor sent twice: an uncounted delivery goes back on the queue (not sent); a
 * logout that cannot be signed fails its message, which SQS offers again (the worker, functions/
 * webhook-delivery.ts, reports it in `batchItemFailures`); once DynamoDB answers, it is sent once.
 */
const tables = useTablesBehindProxy(SHORT_LIMITS);

/** A clock the test moves: the counters' second, the keyring's refresh and the tokens' times. */
function movableClock(iso: string): Clock & { advance(ms: number): void } {
  let now = Date.parse(iso);
  return {
    now: () => new Date(now),
    advance: (ms) => {
      now += ms;
    },
  };
}

/** What a worker's attempt did: posted (and how), put back on the queue (and when), or failed its message. */
function recorder() {
  const posted: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
  const post: HttpPost = async (url, headers, body) => {
    posted.push({ url, headers, body });
    return 200;
  };
  return { posted, post };
}

/** The ways a call fails on every attempt: the SDK gives up, and the caller meets an outage. */
const EVERY_ATTEMPT: Array<[string, Fault]> = [
  ['hangs', { kind: 'hang' }],
  ['throttles', { kind: 'throttle' }],
  ['answers InternalServerError', { kind: 'internal-error' }],
  ['resets the connection', { kind: 'reset' }],
];

describe('the per-host delivery counter failing', () => {
  const SECRET = formatWebhookSecret(Buffer.alloc(32, 9));
  const OWNER = 'owner-host-rate-faults';
  const clock = movableClock('2026-11-27T10:00:00.000Z');
  let hostCount = 0;

  /** An endpoint on a host of its own, so each case counts in a counter no other touches. */
  async function endpointOnNewHost(): Promise<WebhookEndpoint> {
    hostCount += 1;
    const endpoint: WebhookEndpoint = {
      id: newWebhookId(randomUUID()),
      ownerUserId: OWNER,
      url: `https://hooks-${hostCount}.faults.example.com/in`,
      events: ['session.created'],
      description: null,
      createdAt: clock.now().toISOString(),
      createdByKeyId: 'key-faults',
    };
    await new DynamoWebhookRepository(tables().truth, LOCAL_TABLE_NAMES.webhooks).create(endpoint, {
      maxPerOwner: 16,
    });
    return endpoint;
  }

  function worker() {
    const { posted, post } = recorder();
    const queued: Array<{ delivery: WebhookDelivery; delaySeconds: number }> = [];
    const metricLines: string[] = [];
    const { logger, lines } = memoryLogger();
    const deps: DeliveryDeps = {
      webhooks: new DynamoWebhookRepository(tables().db, LOCAL_TABLE_NAMES.webhooks),
      secrets: { secretOf: async () => SECRET },
      hostRate: new DynamoDestinationRateLimit(
        tables().db,
        LOCAL_TABLE_NAMES.webhooks,
        clock,
        WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
      ),
      scheduler: { schedule: async (delivery, delaySeconds) => void queued.push({ delivery, delaySeconds }) },
      post,
      clock,
      logger,
      metrics: createMetrics({ service: 'test', sink: (line) => metricLines.push(line) }),
      retrySeconds: [5, 300],
    };
    return { deps, posted, queued, metricLines, lines };
  }

  const deliveryTo = (endpoint: WebhookEndpoint): WebhookDelivery => ({
    eventId: `evt-host-${hostCount}`,
    ownerUserId: OWNER,
    endpointId: endpoint.id,
    body: JSON.stringify({ id: `evt-host-${hostCount}`, type: 'session.created' }),
    attempt: 0,
  });

  /**
   * How many deliveries a counter of the clock's current second holds, read from DynamoDB: the host's, or
   * with an owner, that owner's share of it.
   */
  async function counted(url: string, ownerUserId?: string): Promise<unknown> {
    const host = new URL(url).hostname;
    const { Item } = await tables().truth.send(
      new GetCommand({
        TableName: LOCAL_TABLE_NAMES.webhooks,
        Key: {
          ownerUserId:
            ownerUserId === undefined
              ? `${HOST_RATE_KEY_PREFIX}${createHash('sha256').update(host).digest('hex')}`
              : ownerHostRatePartition(host, ownerUserId),
          webhookId: `${HOST_RATE_KEY_PREFIX}${Math.floor(clock.now().getTime() / 1000)}`,
        },
        ConsistentRead: true,
      }),
    );
    return Item?.deliveries;
  }

  /** Applies `fault` to the counter's UpdateItem only (the endpoint's read is a GetItem). */
  const injectOnCounter = (fault: Fault) =>
    tables().proxy.inject(fault, { operation: 'UpdateItem', table: LOCAL_TABLE_NAMES.webhooks });

  /** Exactly one POST, signed, of the delivery's body. */
  function expectSentOnce(posted: ReturnType<typeof recorder>['posted'], delivery: WebhookDelivery) {
    expect(posted).toHaveLength(1);
    const [sent] = posted;
    expect(sent?.body).toBe(delivery.body);
    expect(sent?.headers['webhook-id']).toBe(delivery.eventId);
    expect(
      verifyWebhookSignature(
        SECRET,
        delivery.eventId,
        Number(sent?.headers['webhook-timestamp']),
        delivery.body,
        String(sent?.headers['webhook-signature']),
      ),
    ).toBe(true);
  }

  it.each([
    ...EVERY_ATTEMPT,
    ['answers after the deadline on every attempt', { kind: 'late-answer', delayMs: LATE_MS, count: 3 }],
  ] as Array<[string, Fault]>)(
    'puts the delivery back unsent when the counter %s, and sends it once when it runs again',
    async (_name, fault) => {
      const endpoint = await endpointOnNewHost();
      const delivery = deliveryTo(endpoint);
      const { deps, posted, queued, metricLines, lines } = worker();
      await injectOnCounter(fault);
      const firstQueuedAt = clock.now().toISOString();
      expect(await attemptDelivery(deps, delivery)).toBe('host-rate-limited');
      await tables().proxy.clear();
      // Not sent, not dropped, no retry used up: the same attempt, a second later.
      expect(posted).toEqual([]);
      expect(queued).toEqual([
        { delivery: { ...delivery, firstQueuedAt }, delaySeconds: UNCOUNTED_HOST_WAIT_SECONDS },
      ]);
      expect(metricLines.join('\n')).toContain(HOST_RATE_LIMITED_METRIC);
      // What an operator reads: the counter's outage, at warn level, apart from a busy host.
      expect(lines()).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'webhook delivery delayed: its host counter could not be counted',
        }),
      );

      clock.advance(UNCOUNTED_HOST_WAIT_SECONDS * 1000);
      expect(await attemptDelivery(deps, delivery)).toBe('delivered');
      expectSentOnce(posted, delivery);
      expect(queued).toHaveLength(1);
    },
  );

  it.each([
    ['its answer is lost (connection reset)', lostAnswer('reset')],
    ['its answer is lost (InternalServerError)', lostAnswer('internal-error')],
    ['its first answer comes after the deadline', { kind: 'late-answer', delayMs: LATE_MS, count: 1 }],
  ] as Array<[string, Fault]>)(
    'sends the delivery once, counted twice, when the counter lands but %s',
    async (_name, fault) => {
      const endpoint = await endpointOnNewHost();
      const delivery = deliveryTo(endpoint);
      const { deps, posted, queued } = worker();
      await injectOnCounter(fault);
      expect(await attemptDelivery(deps, delivery)).toBe('delivered');
      await tables().proxy.clear();
      expectSentOnce(posted, delivery);
      expect(queued).toEqual([]);
      // The fault meets the first count, the owner's share: the SDK's retry adds again there, so the
      // bound errs towards waiting, never towards sending more. The host's count is counted once.
      expect(await counted(endpoint.url, delivery.ownerUserId)).toBe(2);
      expect(await counted(endpoint.url)).toBe(1);
    },
  );
});

describe('the keyring read of a back-channel logout failing', () => {
  const APP_ORIGIN = 'https://app.logout-faults.test';
  const BOARD: Board = {
    boardId: 'board_logout_faults',
    orgId: 'org_logout_faults',
    visibility: 'PUBLIC',
    name: 'Logout faults',
    appUrl: `${APP_ORIGIN}/board`,
    logoutUrl: `${APP_ORIGIN}/backchannel-logout`,
  };
  const ISSUER = 'https://embed.faults.test';
  const encryption = new CountingKeyEncryption();
  let sessionCount = 0;

  beforeAll(async () => {
    await new DynamoBoardRepository(tables().truth, LOCAL_TABLE_NAMES.boards).put(BOARD);
    const store = new DynamoKeyringStore(tables().truth, LOCAL_TABLE_NAMES.signingKeys);
    await store.replace(await newKeyring(encryption, Date.parse('2026-11-01T00:00:00.000Z')), undefined);
  });

  /** A worker whose signer has not read the keyring yet, as a fresh execution environment. */
  function worker() {
    const clock = movableClock('2026-11-27T10:00:00.000Z');
    const { posted, post } = recorder();
    const queued: Array<{ delivery: LogoutDelivery; delay: number }> = [];
    const signer = new KeyringSigner(
      new DynamoKeyringStore(tables().db, LOCAL_TABLE_NAMES.signingKeys),
      encryption,
      clock,
    );
    const deps: LogoutDeps = {
      boards: new DynamoBoardRepository(tables().db, LOCAL_TABLE_NAMES.boards),
      tokens: async () => signer,
      issuer: ISSUER,
      stageAppUrl: undefined,
      appUrlRule: { allowLoopbackHttp: false },
      scheduler: { schedule: async (delivery, delay) => void queued.push({ delivery, delay }) },
      post,
      clock,
      random: sequenceRandom(),
      logger: memoryLogger().logger,
      metrics: createMetrics({ service: 'test', sink: () => undefined }),
      retrySeconds: [5, 300],
    };
    return { deps, clock, posted, queued };
  }

  const logout = (): LogoutDelivery => {
    sessionCount += 1;
    return {
      eventId: `evt-logout-${sessionCount}`,
      sessionId: `sess-logout-${sessionCount}`,
      boardId: BOARD.boardId,
      userId: 'customer-42',
      attempt: 0,
    };
  };

  const injectOnKeyring = (fault: Fault) =>
    tables().proxy.inject(fault, { operation: 'GetItem', table: LOCAL_TABLE_NAMES.signingKeys });

  /** Exactly one POST to the logout URL, whose logout token names the session and verifies. */
  async function expectLoggedOutOnce(
    { posted, clock }: { posted: ReturnType<typeof recorder>['posted']; clock: Clock },
    delivery: LogoutDelivery,
  ) {
    expect(posted.map((p) => p.url)).toEqual([BOARD.logoutUrl]);
    const token = new URLSearchParams(posted[0]?.body).get('logout_token') ?? '';
    const keys = await new KeyringPublicKeys(
      new DynamoKeyringStore(tables().truth, LOCAL_TABLE_NAMES.signingKeys),
      clock,
    ).publicKeys();
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys }), {
      issuer: ISSUER,
      audience: APP_ORIGIN,
      algorithms: ['ES256'],
      currentDate: clock.now(),
    });
    expect(payload.sid).toBe(delivery.sessionId);
  }

  it.each([...EVERY_ATTEMPT, ['answers after the deadline', { kind: 'slow', delayMs: LATE_MS }]] as Array<
    [string, Fault]
  >)(
    'fails the message unsent when the keyring read %s, and logs out once when SQS offers it again',
    async (_name, fault) => {
      const w = worker();
      const delivery = logout();
      await injectOnKeyring(fault);
      await expect(attemptLogout(w.deps, delivery)).rejects.toBeInstanceOf(StorageUnavailableError);
      await tables().proxy.clear();
      expect(w.posted).toEqual([]);
      expect(w.queued).toEqual([]);

      expect(await attemptLogout(w.deps, delivery)).toBe('delivered');
      await expectLoggedOutOnce(w, delivery);
    },
  );

  it('logs out at once when the keyring read’s first answer is lost: the SDK reads again', async () => {
    const w = worker();
    const delivery = logout();
    await injectOnKeyring(lostAnswer('reset'));
    expect(await attemptLogout(w.deps, delivery)).toBe('delivered');
    await expectLoggedOutOnce(w, delivery);
  });

  it.each(EVERY_ATTEMPT)('signs with the keyring it read when its refresh %s', async (_name, fault) => {
    const w = worker();
    expect(await attemptLogout(w.deps, logout())).toBe('delivered');
    w.posted.length = 0;
    w.clock.advance(KEYRING_REFRESH_MS + 1_000);
    const delivery = logout();
    await injectOnKeyring(fault);
    const seen = tables().proxy.requests.length;
    expect(await attemptLogout(w.deps, delivery)).toBe('delivered');
    await tables().proxy.clear();
    // The refresh was due and tried; the logout went out regardless.
    expect(
      tables()
        .proxy.requests.slice(seen)
        .some((r) => r.table === LOCAL_TABLE_NAMES.signingKeys && r.fault === fault.kind),
    ).toBe(true);
    await expectLoggedOutOnce(w, delivery);
  });
});
