import type { LocalRuntime } from '#local/runtime';
import { startTestRuntime, type TestRuntimeOptions } from './local-runtime';
import { useSharedRecord } from './per-file';

/**
 * The local runtime of one test file (or one describe block): started before its tests, closed after
 * them. The object returned is the runtime once it has started, so a file writes
 * `const runtime = useTestRuntime();` and passes it wherever a `LocalRuntime` goes. Options given as a
 * function are read when the runtime starts (after the file's own setup).
 */
export function useTestRuntime(options: TestRuntimeOptions | (() => TestRuntimeOptions) = {}): LocalRuntime {
  return useSharedRecord(
    () => startTestRuntime(typeof options === 'function' ? options() : options),
    (runtime) => runtime.close(),
  );
}
