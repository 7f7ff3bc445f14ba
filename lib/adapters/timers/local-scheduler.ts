/**
 * The local runtime's delivery scheduler: each delivery runs on a timer in this process. Nothing survives
 * a restart (the local runtime is for development); `close` drops what still waits. Webhook deliveries
 * and back-channel logouts each have one.
 */
import { DELIVERY_QUEUE_SOURCE } from '#lib/definitions/background';
import { describeError, type Logger } from '#lib/platform/logger';
import type { DeliveryScheduler, WebhookDelivery } from '#lib/use-cases/webhook-delivery';

/**
 * Seconds before an attempt that threw runs again. On AWS the message comes back after the queue's
 * visibility timeout (six minutes); locally a developer waits for it, so a few seconds.
 */
export const LOCAL_REDELIVERY_SECONDS = 5;

export interface TimerSchedulerOptions<D> {
  logger: Logger;
  /** What names a delivery in a log line (ids and the attempt; never a body, token or secret). */
  contextOf: (delivery: D) => Record<string, unknown>;
  /** Seconds before an attempt that threw runs again; LOCAL_REDELIVERY_SECONDS unless given. */
  redeliverySeconds?: number;
  /**
   * How many times one attempt may throw before the delivery is dropped: the delivery queue's receive
   * limit, after which SQS moves the message to the dead-letter queue.
   */
  maxHandlings?: number;
}

/**
 * Runs each delivery on a timer. An attempt that throws (DynamoDB or the key file failing, not a receiver
 * answering an error, which the attempt itself schedules again) is handled as the AWS delivery queue
 * handles a message that failed: logged, run again after `redeliverySeconds`, and after `maxHandlings`
 * failures dropped with an error line, where SQS would move it to the dead-letter queue.
 */
export class TimerDeliveryScheduler<D = WebhookDelivery> implements DeliveryScheduler<D> {
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<unknown>>();
  readonly #idleWaiters: Array<() => void> = [];
  readonly #redeliverySeconds: number;
  readonly #maxHandlings: number;
  #closed = false;

  constructor(
    private readonly run: (delivery: D) => Promise<unknown>,
    private readonly options: TimerSchedulerOptions<D>,
  ) {
    this.#redeliverySeconds = options.redeliverySeconds ?? LOCAL_REDELIVERY_SECONDS;
    this.#maxHandlings = options.maxHandlings ?? DELIVERY_QUEUE_SOURCE.maxReceiveCount;
  }

  async schedule(delivery: D, delaySeconds: number): Promise<void> {
    this.#later(delivery, delaySeconds, 1);
  }

  /** Runs `delivery` after `delaySeconds`, this being its `handling`th try of the same attempt. */
  #later(delivery: D, delaySeconds: number, handling: number): void {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const running = this.#handle(delivery, handling);
      this.#running.add(running);
      void running.finally(() => {
        this.#running.delete(running);
        this.#settle();
      });
    }, delaySeconds * 1000);
    timer.unref();
    this.#timers.add(timer);
  }

  /**
   * Resolves once nothing waits and nothing runs: every delivery scheduled so far, and every one they
   * scheduled in turn (a redelivery included), is done (tests wait on it rather than on a timer).
   */
  whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#settle();
    });
  }

  /** True when nothing waits and nothing runs. */
  isIdle(): boolean {
    return this.#timers.size === 0 && this.#running.size === 0;
  }

  #settle(): void {
    if (this.isIdle()) {
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
    }
  }

  async #handle(delivery: D, handling: number): Promise<void> {
    try {
      await this.run(delivery);
    } catch (error) {
      const context = { ...this.options.contextOf(delivery), handling, ...describeError(error) };
      if (handling >= this.#maxHandlings) {
        this.options.logger.error(
          `delivery failed to be handled ${handling} times; dropped (on AWS: the dead-letter queue)`,
          context,
        );
        return;
      }
      this.options.logger.error('delivery failed to be handled; offered again', {
        ...context,
        retryInSeconds: this.#redeliverySeconds,
      });
      this.#later(delivery, this.#redeliverySeconds, handling + 1);
    }
  }

  /** Stops every waiting delivery and waits for the running ones. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all(this.#running);
  }
}
