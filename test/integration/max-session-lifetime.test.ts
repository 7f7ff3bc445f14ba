import { describe, expect, it } from 'vitest';
import { validBody } from '#test/support/fixtures';
import { apiCall, testTarget } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * A stage-wide maximum session lifetime (the CDK context key `maxSessionLifetimeSeconds`, the
 * create-session function's MAX_SESSION_LIFETIME_SECONDS), over HTTP. The handlers read it when they
 * load, so it is set before the runtime starts. The assembly serves the template as synthesized, without it.
 */
const MAX = 3_600;
process.env.MAX_SESSION_LIFETIME_SECONDS = String(MAX);
const runtime = useTestRuntime();

describe.skipIf(testTarget() === 'assembly')('a stage maximum session lifetime', () => {
  const create = (fields: Record<string, unknown>) =>
    apiCall(
      runtime,
      String(runtime.demo?.apiKey),
      'POST',
      '/api/embed/sessions',
      validBody({ boardId: runtime.demo?.publicBoardId, ...fields }),
    );

  it('refuses a longer expiresInSeconds with a 400 that names the maximum', async () => {
    const result = await create({ expiresInSeconds: MAX + 1 });
    expect(result.status).toBe(400);
    expect(result.body).toEqual({
      error: 'Bad Request',
      message: `expiresInSeconds must be at most ${MAX} on this deployment (its maximum session lifetime), got ${MAX + 1}`,
    });
  });

  it('accepts the maximum itself', async () => {
    const result = await create({ expiresInSeconds: MAX });
    expect(result.status).toBe(201);
  });

  it('gives a session that asks for no lifetime the maximum, not the 30-day default', async () => {
    const result = await create({});
    expect(result.status).toBe(201);
    const { createdAt, expiresAt } = (result.body as { session: { createdAt: string; expiresAt: string } })
      .session;
    expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(MAX * 1000);
  });
});
