import { describe, expect, it, vi } from 'vitest';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { createDemoSessionTokens } from '#test/support/demo-sessions';
import { expectUnavailable, useRuntimeBehindProxy } from '#test/support/fault-suite';
import { apiCall, call } from '#test/support/local-runtime';

// DynamoDB fails at once here: the functions' clients retry without the SDK's backoff between attempts.
vi.mock('#lib/platform/aws-clients', async (original) =>
  (await import('#test/support/short-aws-limits')).withQuickRetries(await original()),
);

/**
 * A revoke-all that cannot finish never answers 500 and never leaves its selection half revoked without
 * saying so: when its cut-offs cannot be written it revokes nothing and says so; when it cannot count
 * after writing them it says the sessions up to its first cut-off were revoked. Either way a 503 the
 * caller retries, over HTTP on the local runtime with a fault proxy in front of its DynamoDB.
 */
const env = useRuntimeBehindProxy();

/** Two sessions of `userId`, created with the demo key. */
const sessionsOf = (userId: string) => createDemoSessionTokens(env().runtime, userId, 2);

const revokeAll = (userId: string) => {
  const { runtime } = env();
  return apiCall(runtime, String(runtime.demo?.apiKey), 'POST', '/api/embed/sessions/revoke', { userId });
};
const embedStatus = async (token: string) =>
  (await call(env().runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } })).status;

describe('a revoke-all that cannot finish', () => {
  it('revokes nothing, and says so, when its cut-off records cannot be written', async () => {
    const tokens = await sessionsOf('unwritten');
    await env().proxy.inject(
      { kind: 'throttle' },
      { operation: 'UpdateItem', table: LOCAL_TABLE_NAMES.sessions },
    );
    const result = await revokeAll('unwritten');
    expectUnavailable(result);
    expect(result.body.message).toMatch(/^Nothing was revoked/);
    await env().proxy.clear();
    for (const token of tokens) expect(await embedStatus(token)).toBe(200);
    // Retried as it was, it revokes everything.
    expect((await revokeAll('unwritten')).body).toEqual({ revoked: 2 });
    for (const token of tokens) expect(await embedStatus(token)).toBe(401);
  });

  it('says the sessions up to its first cut-off were revoked when it cannot count them', async () => {
    const tokens = await sessionsOf('uncounted');
    await env().proxy.inject(
      { kind: 'internal-error' },
      { operation: 'Query', table: LOCAL_TABLE_NAMES.sessions },
    );
    const result = await revokeAll('uncounted');
    expectUnavailable(result);
    expect(result.body.message).toMatch(/^The sessions of the selection created up to \S+ were revoked/);
    await env().proxy.clear();
    for (const token of tokens) expect(await embedStatus(token)).toBe(401);
    // The retry finds them covered: nothing more to count.
    expect((await revokeAll('uncounted')).body).toEqual({ revoked: 0 });
  });
});
