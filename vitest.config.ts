import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
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
    },
    setupFiles: ['test/support/setup-child-env.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
