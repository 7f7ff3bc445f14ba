import type { LocalRuntime } from '#local/runtime';
import { startTestRuntime, type TestRuntimeOptions } from './local-runtime';
import { usePerFile } from './per-file';

/**
 * The local runtime of one test file (or one describe block): started before its tests, closed after
 * them. The value returned stands for the runtime once it has started, so a file writes
 * `const runtime = useTestRuntime();` and passes it wherever a `LocalRuntime` goes. Options given as a
 * function are read when the runtime starts (after the file's own setup).
 */
export function useTestRuntime(options: TestRuntimeOptions | (() => TestRuntimeOptions) = {}): LocalRuntime {
  const current = usePerFile(
    'the test runtime',
    () => startTestRuntime(typeof options === 'function' ? options() : options),
    (runtime) => runtime.close(),
  );
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
