import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    // Handlers read their configuration at import; give every test file a valid local environment.
    env: {
      AWS_REGION: 'us-east-1',
      BOARDS_TABLE: 'test-boards',
      MEMBERSHIPS_TABLE: 'test-memberships',
      API_KEYS_TABLE: 'test-api-keys',
      SESSIONS_TABLE: 'test-sessions',
      IDEMPOTENCY_TABLE: 'test-idempotency',
      LOG_LEVEL: 'error',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
