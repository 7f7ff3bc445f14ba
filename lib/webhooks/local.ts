/** The webhook sink of the local runtime: deliveries on timers, the schedule from WEBHOOK_RETRY_SECONDS. */
import type { DestinationPolicy } from '#lib/domain/destinations';
import type { EventSink } from '#lib/domain/events';
import type { WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import type { Logger } from '#lib/platform/logger';
import { createMetrics, type Metrics } from '#lib/platform/metrics';
import { systemClock } from '#lib/platform/system';
import { attemptDelivery, type DeliveryDeps, type HttpPost, WebhookSink } from './delivery';
import { destinationPost } from './destination-post';
import { TimerDeliveryScheduler } from './local-scheduler';

export interface LocalWebhookDelivery {
  sink: EventSink;
  close(): Promise<void>;
}

export function localWebhookDelivery(options: {
  webhooks: WebhookRepository;
  secrets: WebhookSecrets;
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
  return { sink: new WebhookSink(deps), close: () => scheduler.close() };
}
