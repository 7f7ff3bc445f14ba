/**
 * Webhook delivery: the EventSink that fans each event out to its owner's endpoints subscribed to its
 * type, and the attempt of one delivery. Where a delivery waits between attempts is a port: a timer on
 * the local runtime, an SQS queue with message delays on AWS.
 */

import { rateLimitedHostOf } from '#lib/domain/destinations';
import { StorageUnavailableError } from '#lib/domain/errors';
import { EVENT_TYPES, type EventSink, type EventType, type RoutedEvent } from '#lib/domain/events';
import type { Clock, DestinationRateLimit, WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import type { Logger, Metrics } from '#lib/domain/telemetry';
import { signingSecretVersions, subscribesTo } from '#lib/domain/webhook';
import { signWebhook } from '#lib/domain/webhook-signature';

/** A 2xx within this long is delivered; anything slower is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * The AWS retry schedule, in seconds after each failed attempt (Standard Webhooks' reference schedule):
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 10 h: the last attempt comes about 37 hours after the first,
 * so a receiver down for a day still receives everything.
 */
export const AWS_RETRY_SECONDS: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000, 36_000];

/** The metric counting deliveries given up after their last attempt. */
export const EXHAUSTED_METRIC = 'WebhookDeliveriesExhausted';

/**
 * The shortest span a delivery may wait for its host: a local schedule of `0` (no retries) must not give
 * a delivery up at its host's first busy second.
 */
export const MIN_DELIVERY_HORIZON_SECONDS = 60;

/**
 * How long after it was first queued a delivery may still be sent: the retry schedule's span (about 37
 * hours on AWS), at least MIN_DELIVERY_HORIZON_SECONDS. A receiver that fails every attempt is given up
 * after it; so is a delivery its host's limit keeps waiting past it.
 */
export function deliveryHorizonSeconds(retrySeconds: readonly number[]): number {
  return Math.max(
    retrySeconds.reduce((sum, seconds) => sum + seconds, 0),
    MIN_DELIVERY_HORIZON_SECONDS,
  );
}

/** One event for one endpoint: what waits between attempts. Holds no secret and no signature. */
export interface WebhookDelivery {
  eventId: string;
  ownerUserId: string;
  endpointId: string;
  /** The event's JSON: the very same bytes on every attempt. */
  body: string;
  /** How many attempts failed before this one. */
  attempt: number;
  /**
   * ISO time its event was expanded into it: what bounds how long its host's limit may keep it waiting.
   * Absent on a delivery queued before deliveries carried it (counted from its first wait).
   */
  firstQueuedAt?: string;
}

/**
 * True for an attempt read back from a queue (a webhook delivery, a logout): an object whose named fields
 * are text and whose `attempt` is an integer.
 */
export function isQueuedAttempt<D extends { attempt: number }>(
  value: unknown,
  textFields: readonly (keyof D & string)[],
): value is D {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return textFields.every((field) => typeof fields[field] === 'string') && Number.isInteger(fields.attempt);
}

/** Runs `delivery` after `delaySeconds` (0: as soon as possible). Back-channel logout reuses it. */
export interface DeliveryScheduler<D = WebhookDelivery> {
  schedule(delivery: D, delaySeconds: number): Promise<void>;
}

/** A request not sent: its URL, or an address its host resolved to, is not one the service sends to. */
export interface DestinationRefused {
  refused: string;
}

/**
 * POSTs a body; answers the status, undefined when no answer came (timeout, connection refused, reset), or
 * `{refused}` when the destination policy kept it from being sent at all (lib/adapters/outbound-http/destination-post.ts).
 */
export type HttpPost = (
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
) => Promise<number | undefined | DestinationRefused>;

export interface DeliveryDeps {
  webhooks: WebhookRepository;
  secrets: WebhookSecrets;
  /** The per-host bound of deliveries, each owner held to its share of every host. */
  hostRate: DestinationRateLimit;
  scheduler: DeliveryScheduler;
  post: HttpPost;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Seconds to wait after each failed attempt; after the last, the delivery is given up. */
  retrySeconds: readonly number[];
}

/**
 * One event for one owner: what the shared pipeline (the stream consumer, the expiry sweep) hands to
 * delivery. The delivery side expands it into one delivery per endpoint of the owner subscribed to its
 * type, so the pipeline's work per event is the same whatever the owner's endpoints.
 */
export interface WebhookEventHandOff {
  eventId: string;
  ownerUserId: string;
  /** The event's type, which decides the endpoints it goes to. */
  type: EventType;
  /** The event's JSON: the very bytes every delivery of it sends. */
  body: string;
}

/**
 * Where the pipeline hands events off: the delivery queue on AWS (SendMessageBatch, ten at a time, the
 * batches side by side), timers locally. Resolves once every hand-off is accepted, throws otherwise.
 */
export interface WebhookHandOffQueue {
  handOff(events: readonly WebhookEventHandOff[]): Promise<void>;
}

/**
 * Where an expanded event's deliveries wait for their first attempt: all of them in a bounded number of
 * calls (SendMessageBatch on AWS).
 */
export interface DeliveryBatchQueue {
  scheduleAll(deliveries: readonly WebhookDelivery[]): Promise<void>;
}

/**
 * The sink: each event of an owner, handed off once (an ownerless one: never). It reads no endpoint and
 * waits on no receiver: how many endpoints an owner has, and how they answer, is the delivery side's.
 */
export class WebhookSink implements EventSink {
  constructor(private readonly deps: { handOffs: WebhookHandOffQueue }) {}

  async publish(events: readonly RoutedEvent[]): Promise<void> {
    const handOffs: WebhookEventHandOff[] = [];
    for (const routed of events) {
      // An operator's revoke-all is no tenant's event: it goes to the event bus only.
      if (routed.ownerUserId === null) continue;
      handOffs.push({
        eventId: routed.event.id,
        ownerUserId: routed.ownerUserId,
        type: routed.event.type,
        body: JSON.stringify(routed.event),
      });
    }
    if (handOffs.length > 0) await this.deps.handOffs.handOff(handOffs);
  }
}

/** True for a well-formed hand-off read back from a queue. */
export function isWebhookEventHandOff(value: unknown): value is WebhookEventHandOff {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return (
    (['eventId', 'ownerUserId', 'body'] as const).every(
      (field) => typeof fields[field] === 'string' && fields[field] !== '',
    ) && (EVENT_TYPES as readonly unknown[]).includes(fields.type)
  );
}

/**
 * Expands a handed-off event into its first attempts: one per endpoint of its owner subscribed to its
 * type, read now (an endpoint deleted since the event receives nothing; the owner's partition alone is
 * read). Expanding the same hand-off twice (a message offered again) queues the same deliveries again,
 * each with the event's id as its `webhook-id`, so a receiver recognises the repeat. Answers how many
 * it queued.
 */
export async function expandHandOff(
  deps: { webhooks: WebhookRepository; deliveries: DeliveryBatchQueue; clock: Clock },
  handOff: WebhookEventHandOff,
): Promise<number> {
  const endpoints = (await deps.webhooks.list(handOff.ownerUserId)).filter((endpoint) =>
    subscribesTo(endpoint, handOff.type),
  );
  if (endpoints.length === 0) return 0;
  const firstQueuedAt = deps.clock.now().toISOString();
  await deps.deliveries.scheduleAll(
    endpoints.map((endpoint) => ({
      eventId: handOff.eventId,
      ownerUserId: handOff.ownerUserId,
      endpointId: endpoint.id,
      body: handOff.body,
      attempt: 0,
      firstQueuedAt,
    })),
  );
  return endpoints.length;
}

export type AttemptOutcome =
  | 'delivered'
  | 'retrying'
  | 'exhausted'
  | 'endpoint-deleted'
  | 'refused'
  | 'host-rate-limited';

/** The metric counting deliveries put back because their host was at its rate limit. */
export const HOST_RATE_LIMITED_METRIC = 'WebhookDeliveriesDelayedByHostLimit';

/** The metric counting deliveries not sent because their destination was refused at delivery time. */
export const REFUSED_METRIC = 'WebhookDeliveriesRefused';

/** Logged when a delivery is given up because its host's limit would keep it past the schedule's span. */
export const GIVEN_UP_AT_HOST_LIMIT =
  'webhook delivery given up: its host stayed at its rate limit past the retry schedule';

/**
 * One attempt: the endpoint is read again (a deleted one receives nothing more); over its host's rate
 * limit the same attempt is scheduled again for when its turn comes (not an attempt: nothing was sent),
 * unless that turn comes past the schedule's span from when the delivery was first queued: then it is
 * given up and counted as an exhausted one, so no delivery waits for ever under sustained overload;
 * otherwise the body is signed with this attempt's timestamp, and a failure is scheduled again after its
 * backoff, or counted once the schedule is spent. Never logs the secret or the signature.
 */
export async function attemptDelivery(
  deps: DeliveryDeps,
  delivery: WebhookDelivery,
): Promise<AttemptOutcome> {
  const endpoint = await deps.webhooks.get(delivery.ownerUserId, delivery.endpointId);
  const context = {
    eventId: delivery.eventId,
    endpointId: delivery.endpointId,
    attempt: delivery.attempt + 1,
  };
  if (!endpoint) {
    deps.logger.info('webhook endpoint deleted; delivery dropped', context);
    return 'endpoint-deleted';
  }
  const { wait, uncounted } = await hostRateWait(deps.hostRate, endpoint.url, delivery.ownerUserId);
  const now = deps.clock.now();
  if (wait > 0) {
    const firstQueuedAt = delivery.firstQueuedAt ?? now.toISOString();
    const waitedSeconds = (now.getTime() - Date.parse(firstQueuedAt)) / 1000;
    if (waitedSeconds + wait > deliveryHorizonSeconds(deps.retrySeconds)) {
      deps.logger.warn(GIVEN_UP_AT_HOST_LIMIT, { ...context, firstQueuedAt });
      deps.metrics.count(EXHAUSTED_METRIC);
      return 'exhausted';
    }
    // A counter DynamoDB could not count is an outage an operator must tell apart from a busy host.
    if (uncounted)
      deps.logger.warn('webhook delivery delayed: its host counter could not be counted', {
        ...context,
        retryInSeconds: wait,
        ...errorOf(uncounted.cause instanceof Error ? uncounted.cause : uncounted),
      });
    else
      deps.logger.info('webhook delivery delayed: its host is at its rate limit', {
        ...context,
        retryInSeconds: wait,
      });
    deps.metrics.count(HOST_RATE_LIMITED_METRIC);
    await deps.scheduler.schedule({ ...delivery, firstQueuedAt }, wait);
    return 'host-rate-limited';
  }
  const timestamp = Math.floor(now.getTime() / 1000);
  // During a secret rotation's overlap, both secrets sign (lib/domain/webhook.ts).
  const secrets = await Promise.all(
    signingSecretVersions(endpoint, now).map((version) => deps.secrets.secretOf(endpoint.id, version)),
  );
  const status = await deps.post(
    endpoint.url,
    {
      'content-type': 'application/json',
      'user-agent': 'embed-session-webhooks/1',
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secrets, delivery.eventId, timestamp, delivery.body),
    },
    delivery.body,
    DELIVERY_TIMEOUT_MS,
  );
  return settleAttempt(deps, delivery, status, context, {
    delivered: 'webhook delivered',
    givenUp: 'webhook delivery given up after its last attempt',
    retrying: 'webhook delivery failed; retrying',
    exhaustedMetric: EXHAUSTED_METRIC,
    refused: 'webhook delivery refused: its destination is not on the public internet; not sent',
    refusedMetric: REFUSED_METRIC,
  });
}

/**
 * Seconds a delivery waits when its host's counter could not be counted (DynamoDB throttling the one
 * item every delivery to a very busy host writes): the host is taken as busy, so the delivery waits
 * rather than failing its message five times into the dead-letter queue.
 */
export const UNCOUNTED_HOST_WAIT_SECONDS = 1;

/**
 * Seconds a delivery of `ownerUserId` to `url` waits for its turn at the host (its owner's share first,
 * then the host's bound), and the outage when a counter could not be counted. A URL that does not parse
 * is not counted: the POST refuses it without sending anything.
 */
async function hostRateWait(
  hostRate: DestinationRateLimit,
  url: string,
  ownerUserId: string,
): Promise<{ wait: number; uncounted?: StorageUnavailableError }> {
  let host: string;
  try {
    host = rateLimitedHostOf(url);
  } catch {
    return { wait: 0 };
  }
  try {
    return { wait: await hostRate.admit(host, ownerUserId) };
  } catch (error) {
    if (error instanceof StorageUnavailableError)
      return { wait: UNCOUNTED_HOST_WAIT_SECONDS, uncounted: error };
    throw error;
  }
}

/** How an attempt's outcome is logged and counted. */
export interface AttemptReport {
  delivered: string;
  givenUp: string;
  retrying: string;
  /** The metric counting deliveries given up after their last attempt. */
  exhaustedMetric: string;
  /** Logged when the destination was refused at delivery time (nothing sent, no retry). */
  refused: string;
  /** The metric counting those. */
  refusedMetric: string;
}

/**
 * What an attempt's answer (`status`, undefined when none came) leads to: delivered on a 2xx; refused
 * (nothing was sent) when the destination policy kept the request back, logged and counted, and not tried
 * again: the URL was accepted at registration, so its name now resolves where the service never sends (a
 * rebinding, or a record gone wrong), and retrying for 37 hours would send nothing either; otherwise the
 * next attempt scheduled after its delay in `retrySeconds`, or, after the last, given up and counted.
 */
export async function settleAttempt<D extends { attempt: number }>(
  deps: {
    scheduler: DeliveryScheduler<D>;
    logger: Logger;
    metrics: Metrics;
    retrySeconds: readonly number[];
  },
  delivery: D,
  answer: number | undefined | DestinationRefused,
  context: Record<string, unknown>,
  report: AttemptReport,
): Promise<AttemptOutcome> {
  if (typeof answer === 'object') {
    deps.logger.warn(report.refused, { ...context, reason: answer.refused });
    deps.metrics.count(report.refusedMetric);
    return 'refused';
  }
  const status = answer;
  if (status !== undefined && status >= 200 && status < 300) {
    deps.logger.info(report.delivered, { ...context, status });
    return 'delivered';
  }
  const delay = deps.retrySeconds[delivery.attempt];
  if (delay === undefined) {
    deps.logger.warn(report.givenUp, { ...context, status: status ?? null });
    deps.metrics.count(report.exhaustedMetric);
    return 'exhausted';
  }
  deps.logger.info(report.retrying, { ...context, status: status ?? null, retryInSeconds: delay });
  await deps.scheduler.schedule({ ...delivery, attempt: delivery.attempt + 1 }, delay);
  return 'retrying';
}

/** What an operator reads of an outage's error: its name and message (never a payload). */
function errorOf(error: Error): { errorName: string; errorMessage: string } {
  return { errorName: error.name, errorMessage: error.message };
}
