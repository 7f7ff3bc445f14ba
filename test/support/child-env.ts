/**
 * The environment of every child process a test starts (`npm start`, the CLI, a bundle, Java, Node 24…):
 * what a newcomer's shell holds (PATH and HOME) plus what the test sets on purpose, never the test
 * runner's own. A variable the runner happens to have (an `AWS_REGION`, say) once hid an `npm start` that
 * failed on every fresh machine; `test/support/setup-child-env.ts` refuses any spawn that passes more.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ PATH: process.env.PATH, HOME: process.env.HOME, ...extra }))
    if (value !== undefined) env[name] = value;
  return env;
}

/**
 * Variables only a test runner's process has: a child whose environment holds one was given the runner's
 * environment wholesale.
 */
export const RUNNER_ONLY_VARIABLES = ['VITEST', 'VITEST_WORKER_ID', 'VITEST_POOL_ID'] as const;
