/**
 * The local runtime's delivery scheduler: each delivery runs on a timer in this process. Nothing survives
 * a restart (the local runtime is for development); `close` drops what still waits. Webhook deliveries
 * and back-channel logouts each have one.
 */
import type { DeliveryScheduler, WebhookDelivery } from './delivery';

export class TimerDeliveryScheduler<D = WebhookDelivery> implements DeliveryScheduler<D> {
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<unknown>>();
  #closed = false;

  constructor(private readonly run: (delivery: D) => Promise<unknown>) {}

  async schedule(delivery: D, delaySeconds: number): Promise<void> {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const running = this.run(delivery).catch(() => undefined);
      this.#running.add(running);
      void running.finally(() => this.#running.delete(running));
    }, delaySeconds * 1000);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Stops every waiting delivery and waits for the running ones. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all(this.#running);
  }
}
