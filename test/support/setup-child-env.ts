/**
 * Loaded before every test file (vitest `setupFiles`): a child process started from a file under `test/`
 * must be given an explicit environment built by `childEnv` (test/support/child-env.ts). A spawn without
 * `env`, or with one copied from the runner, throws at the call, so no test sees a kinder world than a
 * newcomer's shell. Libraries (esbuild's service, say) spawn as they like: only calls from `test/` are held.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { sep } from 'node:path';
import { promisify } from 'node:util';
import { RUNNER_ONLY_VARIABLES } from './child-env';

// Node 20 is supported on purpose (README); the SDK's notice about its future versions is noise in test
// output. Only this process: children get childEnv, and npm start sets the same for itself.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const TEST_DIR = `${sep}test${sep}`;
const THIS_FILE = import.meta.filename;
const GUARDED = ['spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync', 'fork'] as const;

/** The options argument of a child_process call: the first plain object after the command. */
function optionsOf(args: unknown[]): { env?: Record<string, string | undefined> } | undefined {
  return args
    .slice(1)
    .find(
      (arg): arg is { env?: Record<string, string> } =>
        !!arg && typeof arg === 'object' && !Array.isArray(arg),
    );
}

/** The file that made the call, read from the stack: the first frame outside this file and node internals. */
function callerFile(): string | undefined {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  for (const frame of frames) {
    const file = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?$/.exec(frame)?.[1]?.replace(/^file:\/\//, '');
    if (!file || file === THIS_FILE || file.includes('node:')) continue;
    return file;
  }
  return undefined;
}

export function checkChildEnv(name: string, args: unknown[], caller = callerFile()): void {
  if (!caller?.includes(TEST_DIR) || caller.includes(`${sep}node_modules${sep}`)) return;
  const env = optionsOf(args)?.env;
  if (!env)
    throw new Error(
      `${caller}: child_process.${name}(${String(args[0])}) without an explicit env inherits the test runner's environment; pass env: childEnv({...}) from test/support/child-env.ts`,
    );
  const leaked = RUNNER_ONLY_VARIABLES.filter((variable) => variable in env);
  if (leaked.length > 0)
    throw new Error(
      `${caller}: child_process.${name}(${String(args[0])}) was given the test runner's environment (it holds ${leaked.join(', ')}); pass env: childEnv({...}) from test/support/child-env.ts`,
    );
}

const patched = childProcess as unknown as Record<string, unknown> & { __childEnvGuard?: boolean };
if (!patched.__childEnvGuard) {
  patched.__childEnvGuard = true;
  for (const name of GUARDED) {
    const original = patched[name] as ((...args: unknown[]) => unknown) & { [promisify.custom]?: unknown };
    const guarded = function (this: unknown, ...args: unknown[]) {
      checkChildEnv(name, args);
      return original.apply(this, args);
    } as typeof original;
    const custom = original[promisify.custom] as ((...args: unknown[]) => unknown) | undefined;
    if (custom)
      Object.defineProperty(guarded, promisify.custom, {
        value: (...args: unknown[]) => {
          try {
            checkChildEnv(name, args);
          } catch (error) {
            return Promise.reject(error);
          }
          return custom(...args);
        },
      });
    patched[name] = guarded;
  }
  syncBuiltinESMExports();
}
