/**
 * Webhook delivery on AWS: each (event, endpoint) waits in an SQS queue between attempts. SQS delays a
 * message by at most 15 minutes, so a longer wait is a chain of messages: each carries the time it is due
 * (`notBefore`), and a message taken before then is sent again with the remaining delay (at most 15
 * minutes), without an attempt. The schedule (AWS_RETRY_SECONDS) spans about 37 hours.
 */
import type { AwsJsonCall } from '#lib/aws/json-protocol';
import type { Clock } from '#lib/domain/ports';
import type { BatchResponse } from '#lib/events/stream';
import {
  type AttemptOutcome,
  attemptDelivery,
  type DeliveryDeps,
  type DeliveryScheduler,
  type WebhookDelivery,
} from './delivery';

/** The longest delay SQS gives one message. */
export const SQS_MAX_DELAY_SECONDS = 900;

/** The body of a delivery message. */
export interface DeliveryMessage {
  delivery: WebhookDelivery;
  /** ISO time before which no attempt is made (present when the wait outlasts one message's delay). */
  notBefore?: string;
}

/** Schedules deliveries as SQS messages on the delivery queue. */
export class SqsDeliveryScheduler implements DeliveryScheduler {
  constructor(
    private readonly call: AwsJsonCall,
    private readonly queueUrl: string,
    private readonly clock: Clock,
  ) {}

  async schedule(delivery: WebhookDelivery, delaySeconds: number): Promise<void> {
    const notBefore =
      delaySeconds > SQS_MAX_DELAY_SECONDS
        ? new Date(this.clock.now().getTime() + delaySeconds * 1000).toISOString()
        : undefined;
    await this.send(
      { delivery, ...(notBefore ? { notBefore } : {}) },
      Math.min(delaySeconds, SQS_MAX_DELAY_SECONDS),
    );
  }

  /** Sends a message that came too early again, for the rest of its wait (at most 15 minutes). */
  async postpone(message: DeliveryMessage, remainingSeconds: number): Promise<void> {
    await this.send(message, Math.min(Math.max(0, Math.ceil(remainingSeconds)), SQS_MAX_DELAY_SECONDS));
  }

  private async send(message: DeliveryMessage, delaySeconds: number): Promise<void> {
    await this.call('SendMessage', {
      QueueUrl: this.queueUrl,
      MessageBody: JSON.stringify(message),
      DelaySeconds: delaySeconds,
    });
  }
}

/** One SQS record as Lambda hands it over (the fields read here). */
export interface SqsRecord {
  messageId: string;
  body: string;
}

export type DeliveryMessageOutcome = AttemptOutcome | 'postponed';

/** Parses a delivery message; throws on anything else (it then ends in the dead-letter queue). */
export function parseDeliveryMessage(body: string): DeliveryMessage {
  const parsed = JSON.parse(body) as Partial<DeliveryMessage>;
  const d = parsed?.delivery as Partial<WebhookDelivery> | undefined;
  const valid =
    d &&
    typeof d.eventId === 'string' &&
    typeof d.ownerUserId === 'string' &&
    typeof d.endpointId === 'string' &&
    typeof d.body === 'string' &&
    Number.isInteger(d.attempt) &&
    (parsed.notBefore === undefined || !Number.isNaN(Date.parse(parsed.notBefore)));
  if (!valid) throw new Error('Not a webhook delivery message');
  return parsed as DeliveryMessage;
}

/**
 * Handles one message: postponed while its time has not come, else one attempt (which schedules the next
 * one, or counts the delivery as given up after the last).
 */
export async function handleDeliveryMessage(
  deps: DeliveryDeps & { scheduler: SqsDeliveryScheduler },
  body: string,
): Promise<DeliveryMessageOutcome> {
  const message = parseDeliveryMessage(body);
  if (message.notBefore) {
    const remaining = (Date.parse(message.notBefore) - deps.clock.now().getTime()) / 1000;
    if (remaining >= 1) {
      await deps.scheduler.postpone(message, remaining);
      return 'postponed';
    }
  }
  return attemptDelivery(deps, message.delivery);
}

/**
 * A batch of delivery messages, handled side by side: a message that fails to be handled at all (a
 * malformed body, DynamoDB or KMS or SQS failing) is reported in `batchItemFailures`, so SQS offers it
 * again and, after the queue's receive limit, moves it to the dead-letter queue. A failed attempt is not
 * such a failure: it is scheduled again as a new message.
 */
export async function handleDeliveryBatch(
  deps: DeliveryDeps & { scheduler: SqsDeliveryScheduler },
  records: readonly SqsRecord[],
  onFailure: (error: unknown, context: Record<string, unknown>) => void = () => undefined,
): Promise<BatchResponse> {
  const results = await Promise.allSettled(records.map((record) => handleDeliveryMessage(deps, record.body)));
  const batchItemFailures: BatchResponse['batchItemFailures'] = [];
  results.forEach((result, index) => {
    const record = records[index] as SqsRecord;
    if (result.status === 'rejected') {
      onFailure(result.reason, { messageId: record.messageId });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  });
  return { batchItemFailures };
}
