import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer, STACK_PROJECT } from '#test/support/sequencer';
import { unitFilesMockingAws, unitTestFiles } from '#test/support/unit-files';

/**
 * The stack's test files that read the one shared synthesis (`useSynthesized()` without options). Those
 * that bundle for real or run the app in a process of their own run with the rest.
 */
const SHARED_SYNTHESIS = [
  'test/infra/api.test.ts',
  'test/infra/cfn-lint.test.ts',
  'test/infra/data.test.ts',
  'test/infra/events.test.ts',
  'test/infra/gateway-responses.test.ts',
  'test/infra/id-token-keys.test.ts',
  'test/infra/monitoring.test.ts',
  'test/infra/nag.test.ts',
  'test/infra/operations-doc.test.ts',
  'test/infra/outputs.test.ts',
  'test/infra/rate-limits.test.ts',
  'test/infra/stage.test.ts',
];

/**
 * The files beside the unit tests that start no local runtime in their process, mock nothing and change no
 * global state they do not put back: the docs', the examples', the stack's configuration's, the DynamoDB
 * adapters' and engines', the bundles' and those of `npm start` (which runs in processes of its own). They
 * share their workers' processes, as the unit tests do, rather than pay for one each
 * (test/unit/support/shared-processes.test.ts holds them to it).
 */
const STANDALONE = [
  'test/docs/docs.test.ts',
  'test/docs/embedding.test.ts',
  'test/docs/quickstart.test.ts',
  'test/docs/scale.test.ts',
  'test/docs/scripts.test.ts',
  'test/examples/board-app/key-rotation.test.ts',
  'test/examples/host-page/backend.test.ts',
  'test/examples/host-page/page.test.ts',
  'test/examples/host-page/server.test.ts',
  'test/infra/app.test.ts',
  'test/infra/config.test.ts',
  'test/infra/deploy.test.ts',
  'test/integration/background-bundles.test.ts',
  'test/integration/bench-paths.test.ts',
  'test/integration/bounded-reads.test.ts',
  'test/integration/dynamodb-adapters.test.ts',
  'test/integration/dynamodb-engines.test.ts',
  'test/integration/dynamodb-local-leg.test.ts',
  'test/integration/dynamodb-writes.test.ts',
  'test/integration/ensure-tables.test.ts',
  'test/integration/events/process.test.ts',
  'test/integration/faults/delivery-worker.test.ts',
  'test/integration/faults/event-writes.test.ts',
  'test/integration/lambda-credentials.test.ts',
  'test/integration/npm-start-failures.test.ts',
  'test/integration/npm-start-logs.test.ts',
  'test/integration/npm-start.test.ts',
];
/** The stack's files that synthesize with options of their own: they share the stack's processes. */
const OWN_SYNTHESIS = ['test/infra/definitions.test.ts', 'test/infra/indexes.test.ts'];

/**
 * The unit test files that share their workers' processes: all but those that mock an AWS client, whose
 * mock is the process's (test/support/unit-files.ts).
 */
const MOCKING_AWS = new Set(unitFilesMockingAws());
const SHARED_UNIT = unitTestFiles().filter((file) => !MOCKING_AWS.has(file));

/**
 * Workers: one and a half per core. Much of a file's time is spent waiting (for a
 * local runtime's HTTP answer, a browser, a child process), so a second file per core fills it.
 */
const WORKERS = Math.max(2, Math.round(availableParallelism() * 1.5));

export default defineConfig({
  test: {
    // Handlers read their configuration at import; give every test file the tables' names. No AWS_*
    // variable here: a child process never sees this environment (test/support/setup-child-env.ts), and
    // a test that needs a region, as in Lambda, says so itself.
    env: {
      BOARDS_TABLE: 'test-boards',
      MEMBERSHIPS_TABLE: 'test-memberships',
      API_KEYS_TABLE: 'test-api-keys',
      SESSIONS_TABLE: 'test-sessions',
      IDEMPOTENCY_TABLE: 'test-idempotency',
      EVENTS_TABLE: 'test-events',
      WEBHOOKS_TABLE: 'test-webhooks',
      LOG_LEVEL: 'error',
      // esbuild, which the bundles' tests run in the workers, takes every core while it builds; one is
      // enough for it, and the other stays with the local runtimes, whose DynamoDB calls keep their
      // production limit of 1 s an attempt.
      GOMAXPROCS: '1',
    },
    setupFiles: ['test/support/setup-child-env.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The longest files first, from recorded times when a fresh clone has no cache of its own.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      // The stack's tests: most read the stack as cdk.json configures it (test/support/synthesized.ts),
      // two synthesize it with options of their own.
      {
        // Their files share the process of the worker they run in, which keeps its modules, so the app is
        // synthesized once per worker, not once per file. They change no global state of that process.
        // One worker runs them one after another while the others run the runtime's longest files
        // (test/support/sequencer.ts).
        extends: true,
        test: {
          name: STACK_PROJECT,
          include: [...SHARED_SYNTHESIS, ...OWN_SYNTHESIS],
          isolate: false,
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The unit tests: milliseconds each, so the files share the processes they run in rather than
        // paying for one each. None of them mocks a module or an AWS client (those that mock a client run
        // with the runtime's, each in a process of its own; test/unit/support/shared-processes.test.ts);
        // each puts back the timers and variables it fakes.
        extends: true,
        test: {
          name: 'unit',
          include: SHARED_UNIT,
          isolate: false,
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'standalone',
          include: STANDALONE,
          isolate: false,
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'runtime',
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
          include: ['test/**/*.test.ts'],
          exclude: [
            ...SHARED_SYNTHESIS,
            ...OWN_SYNTHESIS,
            ...SHARED_UNIT,
            ...STANDALONE,
            'test/bench/**',
            'node_modules/**',
          ],
        },
      },
    ],
  },
});
