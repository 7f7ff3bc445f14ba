import type { BatchResponse } from '#lib/events/stream';
import { createLogger, describeError } from '#lib/platform/logger';
import { lazyWebhookSecrets } from '#lib/signing/webhook-keys';
import { handleDeliveryBatch, type SqsRecord } from '#lib/webhooks/sqs';
import { webhookDeliveryDeps } from './wiring';

const deps = webhookDeliveryDeps(process.env, lazyWebhookSecrets);
const logger = createLogger({ function: 'webhook-delivery' });

/** Delivery messages from the queue: one attempt each; a message that cannot be handled is retried by SQS. */
export const handler = async (event: { Records?: SqsRecord[] }): Promise<BatchResponse> =>
  handleDeliveryBatch(deps, event.Records ?? [], (error, context) =>
    logger.error('webhook delivery message failed; SQS offers it again', {
      ...context,
      ...describeError(error),
    }),
  );
