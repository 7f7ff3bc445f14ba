import type { SQSBatchResponse } from 'aws-lambda';
import { handleDeliveryBatch, type SqsRecord } from '#lib/adapters/sqs/delivery-queue';
import { environmentOf } from '#lib/definitions/environment';
import { createLogger, describeError } from '#lib/platform/logger';
import { webhookDeliveryDeps } from './wiring';

const deps = webhookDeliveryDeps(environmentOf('webhookDelivery', process.env));
const logger = createLogger({ function: 'webhook-delivery' });

/**
 * Messages of the delivery queue, one attempt each: a webhook delivery, or a back-channel logout (signed
 * now). A message that cannot be handled is retried by SQS.
 */
export const handler = async (event: { Records?: SqsRecord[] }): Promise<SQSBatchResponse> =>
  handleDeliveryBatch(deps, event.Records ?? [], (error, context) =>
    logger.error('delivery queue message failed; SQS offers it again', {
      ...context,
      ...describeError(error),
    }),
  );
