import { afterAll, beforeAll } from 'vitest';
import type { LocalRuntime } from '#local/runtime';
import { startTestRuntime, type TestRuntimeOptions } from './local-runtime';

/**
 * The local runtime of one test file (or one describe block): started before its tests, closed after
 * them. The value returned stands for the runtime once it has started, so a file writes
 * `const runtime = useTestRuntime();` and passes it wherever a `LocalRuntime` goes. Options given as a
 * function are read when the runtime starts (after the file's own setup).
 */
export function useTestRuntime(options: TestRuntimeOptions | (() => TestRuntimeOptions) = {}): LocalRuntime {
  let started: LocalRuntime | undefined;
  beforeAll(async () => {
    started = await startTestRuntime(typeof options === 'function' ? options() : options);
  });
  afterAll(async () => {
    await started?.close();
    started = undefined;
  });
  const current = (): LocalRuntime => {
    if (!started)
      throw new Error('the test runtime is used outside its tests (before beforeAll or after afterAll)');
    return started;
  };
  return new Proxy({} as LocalRuntime, {
    get: (_target, property) => Reflect.get(current(), property),
    has: (_target, property) => Reflect.has(current(), property),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, property) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), property);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
