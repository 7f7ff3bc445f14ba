import { AsyncLocalStorage } from 'node:async_hooks';

/** The deadline (epoch milliseconds) of the request being handled, for everything it awaits. */
const deadlines = new AsyncLocalStorage<number>();

/** Runs `fn` with a deadline (epoch milliseconds) that everything it awaits can read. */
export function runWithDeadline<T>(deadline: number, fn: () => T): T {
  return deadlines.run(deadline, fn);
}

/** Milliseconds left before the current request's deadline (0 once passed); undefined outside a request. */
export function remainingMs(): number | undefined {
  const deadline = deadlines.getStore();
  return deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
}
