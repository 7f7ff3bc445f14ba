/**
 * Webhook delivery and back-channel logout on AWS: each (event, endpoint), and each logout of an ended
 * session, waits in the one SQS delivery queue between attempts (a message says which it is: `delivery`
 * or `logout`; a revoke-all's logouts are queued by the steps of its fan-out, `fanOut` messages). The
 * stream consumer and the expiry sweep hand each event over as one `webhookEvent` message per owner,
 * which the worker expands into that owner's deliveries, so nothing of an owner's endpoints runs on the
 * shared pipeline. SQS delays a message by at most 15 minutes, so a longer wait is a chain of messages: each
 * carries the time it is due (`notBefore`), and a message taken before then is sent again with the
 * remaining delay (at most 15 minutes), without an attempt. The schedule (AWS_RETRY_SECONDS) spans about
 * 37 hours.
 */
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { DELIVERY_QUEUE_SOURCE } from '#lib/definitions/background';
import type { Clock } from '#lib/domain/ports';
import {
  attemptLogout,
  isLogoutDelivery,
  type LogoutDelivery,
  type LogoutDeps,
} from '#lib/use-cases/back-channel-logout';
import {
  expandLogouts,
  type FanOutDeps,
  type FanOutQueue,
  isLogoutFanOut,
  type LogoutFanOut,
} from '#lib/use-cases/logout-fan-out';
import {
  type AttemptOutcome,
  attemptDelivery,
  type DeliveryBatchQueue,
  type DeliveryDeps,
  type DeliveryScheduler,
  expandHandOff,
  isQueuedAttempt,
  isWebhookEventHandOff,
  type WebhookDelivery,
  type WebhookEventHandOff,
  type WebhookHandOffQueue,
} from '#lib/use-cases/webhook-delivery';

/** The longest delay SQS gives one message. */
export const SQS_MAX_DELAY_SECONDS = 900;

/**
 * What one message carries: a webhook delivery, an event handed off by the pipeline (expanded into its
 * deliveries by the worker), a back-channel logout, or a step of a revoke-all's logout fan-out. Never a
 * token or a secret.
 */
export type QueuedWork =
  | { delivery: WebhookDelivery }
  | { webhookEvent: WebhookEventHandOff }
  | { logout: LogoutDelivery }
  | { fanOut: LogoutFanOut };

/** SendMessageBatch takes at most ten messages. */
export const SQS_BATCH_MAX = 10;

/** The body of a message on the delivery queue. */
export type DeliveryMessage = QueuedWork & {
  /** ISO time before which no attempt is made (present when the wait outlasts one message's delay). */
  notBefore?: string;
};

/** A work to queue, visible after `delaySeconds`. */
export interface QueuedDelayedWork {
  work: QueuedWork;
  delaySeconds: number;
}

/**
 * Schedules deliveries as SQS messages on the delivery queue; `logouts` schedules logouts on it; `send`
 * queues works in batches (a fan-out's steps and logouts, an expanded event's deliveries), and
 * `handOff` queues the pipeline's events, one message per event and owner.
 */
export class SqsDeliveryScheduler
  implements DeliveryScheduler, FanOutQueue, WebhookHandOffQueue, DeliveryBatchQueue
{
  /** The same queue, for back-channel logouts (`{"logout": …}` messages). */
  readonly logouts: DeliveryScheduler<LogoutDelivery> = {
    schedule: (logout, delaySeconds) => this.enqueue({ logout }, delaySeconds),
  };

  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    private readonly clock: Clock,
  ) {}

  schedule(delivery: WebhookDelivery, delaySeconds: number): Promise<void> {
    return this.enqueue({ delivery }, delaySeconds);
  }

  /** One message per (event, owner), ten to a call, the calls side by side. */
  handOff(events: readonly WebhookEventHandOff[]): Promise<void> {
    return this.send(events.map((webhookEvent) => ({ work: { webhookEvent }, delaySeconds: 0 })));
  }

  /** An expanded event's first attempts, due at once. */
  scheduleAll(deliveries: readonly WebhookDelivery[]): Promise<void> {
    return this.send(deliveries.map((delivery) => ({ work: { delivery }, delaySeconds: 0 })));
  }

  private async enqueue(work: QueuedWork, delaySeconds: number): Promise<void> {
    const notBefore =
      delaySeconds > SQS_MAX_DELAY_SECONDS
        ? new Date(this.clock.now().getTime() + delaySeconds * 1000).toISOString()
        : undefined;
    await this.sendOne(
      { ...work, ...(notBefore ? { notBefore } : {}) },
      Math.min(delaySeconds, SQS_MAX_DELAY_SECONDS),
    );
  }

  /**
   * Queues works with SendMessageBatch calls of at most ten messages and at most the queue's message
   * size in all (what SQS takes in one call), the calls side by side. A batch SQS refuses in part fails
   * the whole call: the step that sent it is run again, and what it queues again repeats only what was
   * queued already.
   */
  async send(works: readonly QueuedDelayedWork[]): Promise<void> {
    const answers = await Promise.all(
      sqsBatches(works).map(async (batch) => {
        const answer = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: batch.map(({ body, delaySeconds }, i) => ({
              Id: String(i),
              MessageBody: body,
              DelaySeconds: Math.min(Math.max(0, Math.ceil(delaySeconds)), SQS_MAX_DELAY_SECONDS),
            })),
          }),
        );
        return { failed: answer.Failed?.length ?? 0, of: batch.length };
      }),
    );
    const refused = answers.find(({ failed }) => failed > 0);
    if (refused) throw new Error(`SQS refused ${refused.failed} of ${refused.of} messages of a batch`);
  }

  /** Sends a message that came too early again, for the rest of its wait (at most 15 minutes). */
  async postpone(message: DeliveryMessage, remainingSeconds: number): Promise<void> {
    await this.sendOne(message, Math.min(Math.max(0, Math.ceil(remainingSeconds)), SQS_MAX_DELAY_SECONDS));
  }

  private async sendOne(message: DeliveryMessage, delaySeconds: number): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        DelaySeconds: delaySeconds,
      }),
    );
  }
}

/**
 * Splits works into SendMessageBatch calls: at most ten messages each, and at most the queue's message
 * size in all (SQS refuses a larger batch whole). A message alone in its batch is sent whatever its size
 * (SQS then refuses it, as it would a SendMessage of it).
 */
export function sqsBatches(
  works: readonly QueuedDelayedWork[],
): Array<Array<{ body: string; delaySeconds: number }>> {
  const batches: Array<Array<{ body: string; delaySeconds: number }>> = [];
  let current: Array<{ body: string; delaySeconds: number }> = [];
  let bytes = 0;
  for (const { work, delaySeconds } of works) {
    const body = JSON.stringify(work);
    const size = Buffer.byteLength(body);
    if (
      current.length === SQS_BATCH_MAX ||
      (current.length > 0 && bytes + size > DELIVERY_QUEUE_SOURCE.maxMessageBytes)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push({ body, delaySeconds });
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** One SQS record as Lambda hands it over (the fields read here). */
export interface SqsRecord {
  messageId: string;
  body: string;
}

export type DeliveryMessageOutcome = AttemptOutcome | 'postponed' | 'expanded' | 'event-expanded';

function isWebhookDelivery(value: unknown): value is WebhookDelivery {
  if (!isQueuedAttempt<WebhookDelivery>(value, ['eventId', 'ownerUserId', 'endpointId', 'body']))
    return false;
  const { firstQueuedAt } = value as { firstQueuedAt?: unknown };
  return (
    firstQueuedAt === undefined ||
    (typeof firstQueuedAt === 'string' && !Number.isNaN(Date.parse(firstQueuedAt)))
  );
}

/** Parses a delivery queue message; throws on anything else (it then ends in the dead-letter queue). */
export function parseDeliveryMessage(body: string): DeliveryMessage {
  const parsed = JSON.parse(body) as {
    delivery?: unknown;
    webhookEvent?: unknown;
    logout?: unknown;
    fanOut?: unknown;
    notBefore?: unknown;
  } | null;
  const dueTimeValid =
    parsed?.notBefore === undefined ||
    (typeof parsed.notBefore === 'string' && !Number.isNaN(Date.parse(parsed.notBefore)));
  const kinds = [parsed?.delivery, parsed?.webhookEvent, parsed?.logout, parsed?.fanOut].filter(
    (work) => work !== undefined,
  ).length;
  const valid =
    dueTimeValid &&
    kinds === 1 &&
    (parsed?.delivery === undefined || isWebhookDelivery(parsed.delivery)) &&
    (parsed?.webhookEvent === undefined || isWebhookEventHandOff(parsed.webhookEvent)) &&
    (parsed?.logout === undefined || isLogoutDelivery(parsed.logout)) &&
    (parsed?.fanOut === undefined || isLogoutFanOut(parsed.fanOut));
  if (!valid)
    throw new Error('Not a webhook delivery or event, back-channel logout or logout fan-out message');
  return parsed as DeliveryMessage;
}

/** What the delivery queue's worker needs: webhook delivery's ports, back-channel logout's, the fan-out's. */
export type DeliveryQueueDeps = DeliveryDeps & {
  scheduler: SqsDeliveryScheduler;
  /** Back-channel logout's ports; their scheduler is `scheduler.logouts`. */
  logouts: LogoutDeps;
  /** The ports of a revoke-all's logout fan-out; its queue is `scheduler`. */
  fanOut: FanOutDeps;
};

/**
 * Handles one message: postponed while its time has not come, else one attempt (which schedules the next
 * one, or counts the delivery or logout as given up after the last).
 */
export async function handleDeliveryMessage(
  deps: DeliveryQueueDeps,
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
  if ('fanOut' in message) {
    await expandLogouts(deps.fanOut, message.fanOut);
    return 'expanded';
  }
  if ('webhookEvent' in message) {
    await expandHandOff(
      { webhooks: deps.webhooks, deliveries: deps.scheduler, clock: deps.clock },
      message.webhookEvent,
    );
    return 'event-expanded';
  }
  return 'logout' in message
    ? attemptLogout(deps.logouts, message.logout)
    : attemptDelivery(deps, message.delivery);
}

/**
 * A batch of delivery messages, handled side by side: a message that fails to be handled at all (a
 * malformed body, DynamoDB or KMS or SQS failing) is reported in `batchItemFailures`, so SQS offers it
 * again and, after the queue's receive limit, moves it to the dead-letter queue. A failed attempt is not
 * such a failure: it is scheduled again as a new message.
 */
export async function handleDeliveryBatch(
  deps: DeliveryQueueDeps,
  records: readonly SqsRecord[],
  onFailure: (error: unknown, context: Record<string, unknown>) => void = () => undefined,
): Promise<SQSBatchResponse> {
  const results = await Promise.allSettled(records.map((record) => handleDeliveryMessage(deps, record.body)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  results.forEach((result, index) => {
    const record = records[index] as SqsRecord;
    if (result.status === 'rejected') {
      onFailure(result.reason, { messageId: record.messageId });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  });
  return { batchItemFailures };
}
