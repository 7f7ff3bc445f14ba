/**
 * The local runtime's delivery scheduler: each delivery runs on a timer in this process. Nothing survives
 * a restart (the local runtime is for development); `close` drops what still waits. Webhook deliveries
 * and back-channel logouts each have one.
 */
import type { DeliveryScheduler, WebhookDelivery } from './delivery';

export class TimerDeliveryScheduler<D = WebhookDelivery> implements DeliveryScheduler<D> {
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<unknown>>();
  readonly #idleWaiters: Array<() => void> = [];
  #closed = false;

  constructor(private readonly run: (delivery: D) => Promise<unknown>) {}

  async schedule(delivery: D, delaySeconds: number): Promise<void> {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const running = this.run(delivery).catch(() => undefined);
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
   * scheduled in turn, is done (tests wait on it rather than on a timer).
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

  /** Stops every waiting delivery and waits for the running ones. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all(this.#running);
  }
}
