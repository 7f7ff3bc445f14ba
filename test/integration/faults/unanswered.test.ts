import { describe, expect, it } from 'vitest';
import { describeOutage, useRuntimeBehindProxy } from '#test/support/fault-suite';
import { validBody } from '#test/support/fixtures';
import { call, createSessionCall } from '#test/support/local-runtime';

/** DynamoDB accepts the connection but does not answer in time. */
const env = useRuntimeBehindProxy();
describeOutage(env, 'never answers', { kind: 'hang' });
describeOutage(env, 'answers after 1.5 s, later than the per-call timeout', { kind: 'slow', delayMs: 1_500 });

describe('when DynamoDB answers slowly, but within the per-call timeout', () => {
  it('creates the session and opens its page: slow, not failed', async () => {
    const { proxy, runtime } = env();
    await proxy.inject({ kind: 'slow', delayMs: 400 });
    const created = await createSessionCall(runtime, validBody({ boardId: runtime.demo?.privateBoardId }));
    expect(created.status, created.text).toBe(201);
    const page = await call(runtime, `/embed?token=${created.body.sessionToken}`, {
      headers: { Accept: 'application/json' },
    });
    expect(page.status).toBe(200);
  });
});
