import { AsyncLocalStorage } from 'node:async_hooks';

/** Where the deadline of the request being handled is kept while it runs. */
export interface DeadlineStore {
  /** Runs `fn` with a deadline (epoch milliseconds) that everything it awaits can read. */
  run<T>(deadline: number, fn: () => T): T;
  /** The deadline of the request being handled; undefined outside a request. */
  current(): number | undefined;
}

/**
 * For a process that handles one request at a time: a Lambda execution environment, unless Lambda
 * Managed Instances run several invocations in it (AWS_LAMBDA_MAX_CONCURRENCY). The deadline sits in a
 * variable from the start of the request until its result settles. On Node 20, AsyncLocalStorage would
 * install promise hooks that tax every promise of the invocation (3 ms of a cold start that lists
 * sessions); Node 24's AsyncContextFrame is cheaper, but not free.
 */
function singleSlot(): DeadlineStore {
  let slot: number | undefined;
  return {
    run(deadline, fn) {
      slot = deadline;
      let result: ReturnType<typeof fn>;
      try {
        result = fn();
      } catch (error) {
        slot = undefined;
        throw error;
      }
      if (result instanceof Promise) {
        const clear = () => {
          if (slot === deadline) slot = undefined;
        };
        result.then(clear, clear);
      } else {
        slot = undefined;
      }
      return result;
    },
    current: () => slot,
  };
}

/** For a process with requests in flight together (the local runtime, tests, a multi-concurrent Lambda). */
function perAsyncContext(): DeadlineStore {
  const storage = new AsyncLocalStorage<number>();
  return {
    run: (deadline, fn) => storage.run(deadline, fn),
    current: () => storage.getStore(),
  };
}

/**
 * The store for a process with this environment: one slot where Lambda hands the process one invocation
 * at a time (the rule @aws/lambda-invoke-store follows for the request id), otherwise one deadline per
 * async context, so that concurrent requests never share one.
 */
export function deadlineStoreFor(env: Readonly<Record<string, string | undefined>>): DeadlineStore {
  const oneAtATime =
    env.AWS_LAMBDA_FUNCTION_NAME !== undefined && env.AWS_LAMBDA_MAX_CONCURRENCY === undefined;
  return oneAtATime ? singleSlot() : perAsyncContext();
}

const store = deadlineStoreFor(process.env);

/** Runs `fn` with a deadline (epoch milliseconds) that everything it awaits can read. */
export function runWithDeadline<T>(deadline: number, fn: () => T): T {
  return store.run(deadline, fn);
}

/** Milliseconds left before the current request's deadline (0 once passed); undefined outside a request. */
export function remainingMs(): number | undefined {
  const deadline = store.current();
  return deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
}
