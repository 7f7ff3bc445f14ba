/**
 * The webhook sink of the local runtime, shaped as on AWS: the pipeline hands each owner's event to a
 * timer (the delivery queue's `webhookEvent` message), which expands it into the owner's deliveries, each
 * on its own timers, the schedule from WEBHOOK_RETRY_SECONDS.
 */

import { destinationPost } from '#lib/adapters/outbound-http/destination-post';
import { TimerDeliveryScheduler } from '#lib/adapters/timers/local-scheduler';
import type { DestinationPolicy } from '#lib/domain/destinations';
import type { EventSink } from '#lib/domain/events';
import type { DestinationRateLimit, WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import type { Logger } from '#lib/platform/logger';
import { createMetrics, type Metrics } from '#lib/platform/metrics';
import { systemClock } from '#lib/platform/system';
import {
  attemptDelivery,
  type DeliveryDeps,
  expandHandOff,
  type HttpPost,
  type WebhookDelivery,
  type WebhookEventHandOff,
  WebhookSink,
} from '#lib/use-cases/webhook-delivery';

export interface LocalWebhookDelivery {
  sink: EventSink;
  close(): Promise<void>;
}

export function localWebhookDelivery(options: {
  webhooks: WebhookRepository;
  secrets: WebhookSecrets;
  /** The per-host bound of deliveries (the same counters as on AWS: DestinationRateLimit). */
  hostRate: DestinationRateLimit;
  retrySeconds: readonly number[];
  logger: Logger;
  metrics?: Metrics;
  /** Where requests may go: public internet hosts, and loopback when the operator allowed it. */
  destinations: DestinationPolicy;
  post?: HttpPost;
  /** Seconds before an attempt that threw runs again (LOCAL_REDELIVERY_SECONDS unless given). */
  redeliverySeconds?: number;
}): LocalWebhookDelivery {
  const deps: DeliveryDeps = {
    webhooks: options.webhooks,
    secrets: options.secrets,
    hostRate: options.hostRate,
    retrySeconds: options.retrySeconds,
    logger: options.logger,
    metrics: options.metrics ?? createMetrics({ service: 'webhook-delivery' }),
    post: options.post ?? destinationPost(options.destinations),
    clock: systemClock,
    scheduler: { schedule: async () => undefined },
  };
  const scheduler = new TimerDeliveryScheduler((delivery) => attemptDelivery(deps, delivery), {
    logger: options.logger,
    contextOf: ({ eventId, endpointId, attempt }) => ({ eventId, endpointId, attempt: attempt + 1 }),
    redeliverySeconds: options.redeliverySeconds,
  });
  deps.scheduler = scheduler;
  const deliveries = {
    scheduleAll: async (all: readonly WebhookDelivery[]) => {
      for (const delivery of all) await scheduler.schedule(delivery, 0);
    },
  };
  // A hand-off that throws (the endpoint table failing) is offered again, as SQS offers the message again.
  const handOffs = new TimerDeliveryScheduler<WebhookEventHandOff>(
    (handOff) => expandHandOff({ webhooks: options.webhooks, deliveries, clock: systemClock }, handOff),
    {
      logger: options.logger,
      contextOf: ({ eventId, ownerUserId }) => ({ eventId, ownerUserId }),
      redeliverySeconds: options.redeliverySeconds,
    },
  );
  return {
    sink: new WebhookSink({
      handOffs: {
        handOff: async (events) => {
          for (const event of events) await handOffs.schedule(event, 0);
        },
      },
    }),
    close: async () => {
      await handOffs.close();
      await scheduler.close();
    },
  };
}
