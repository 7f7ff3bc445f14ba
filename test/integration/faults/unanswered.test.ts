import { describe, expect, it, vi } from 'vitest';
import { describeOutage, useRuntimeBehindProxy } from '#test/support/fault-suite';
import { validBody } from '#test/support/fixtures';
import { call, createSessionCall } from '#test/support/local-runtime';
import { LATE_MS, SLOW_MS } from '#test/support/short-aws-limits';

// The functions' AWS clients run with the short limits: a late DynamoDB costs a fraction of a second.
vi.mock('#lib/platform/aws-clients', async (original) =>
  (await import('#test/support/short-aws-limits')).withShortLimits(await original()),
);

/** DynamoDB accepts the connection but does not answer in time. */
const env = useRuntimeBehindProxy();
describeOutage(env, 'never answers', { kind: 'hang' });
describeOutage(env, 'answers later than the per-call timeout', { kind: 'slow', delayMs: LATE_MS });

describe('when DynamoDB answers slowly, but within the per-call timeout', () => {
  it('creates the session and opens its page: slow, not failed', async () => {
    const { proxy, runtime } = env();
    await proxy.inject({ kind: 'slow', delayMs: SLOW_MS });
    const created = await createSessionCall(runtime, validBody({ boardId: runtime.demo?.privateBoardId }));
    expect(created.status, created.text).toBe(201);
    const page = await call(runtime, `/embed?token=${created.body.sessionToken}`, {
      headers: { Accept: 'application/json' },
    });
    expect(page.status).toBe(200);
  });
});
