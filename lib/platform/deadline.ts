import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The deadline of the request being handled, carried through its async calls. Per request, not per
 * module: the local runtime runs every function in one process, many requests at a time.
 */
const storage = new AsyncLocalStorage<{ deadline: number }>();

/** Runs `fn` with a deadline (epoch milliseconds) that everything it awaits can read. */
export function runWithDeadline<T>(deadline: number, fn: () => T): T {
  return storage.run({ deadline }, fn);
}

/** Milliseconds left before the current request's deadline (0 once passed); undefined outside a request. */
export function remainingMs(): number | undefined {
  const store = storage.getStore();
  return store === undefined ? undefined : Math.max(0, store.deadline - Date.now());
}
