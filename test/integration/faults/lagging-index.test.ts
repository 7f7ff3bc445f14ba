import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_SCOPE_INDEXES, SESSION_TOKEN_INDEX } from '#lib/definitions/tables';
import type { LocalRuntime } from '#local/runtime';
import { validBody } from '#test/support/fixtures';
import { startLaggingIndexProxy } from '#test/support/lagging-index-proxy';
import { apiCall, call } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { startTestDynamo } from '#test/support/test-dynamo';

/**
 * The indexes lag writes (DynamoDB's global secondary indexes are eventually consistent): here by a
 * minute, so a session created a moment before a revoke-all is missing from every index read the call
 * makes, and from the token index, however slow a loaded machine makes the moment between the two. The
 * cut-off must cover it all the same, and its link opens at once. Nothing here waits for the lag to end.
 */
let proxy: Awaited<ReturnType<typeof startLaggingIndexProxy>>;
let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  proxy = await startLaggingIndexProxy(dynamo.endpoint, {
    indexes: [...Object.values(SESSION_SCOPE_INDEXES), SESSION_TOKEN_INDEX],
    lagMs: 60_000,
  });
});
afterAll(async () => {
  await proxy?.close();
  await dynamo?.close();
});
const runtime = useTestRuntime(() => ({ dynamoEndpoint: proxy.endpoint }));

describe('revoke-all while the scope indexes lag', () => {
  it.each([
    ['by userId', (_demo: NonNullable<LocalRuntime['demo']>) => ({ userId: 'lag-user' }), undefined],
    [
      'by userId on a board',
      (demo: NonNullable<LocalRuntime['demo']>) => ({ userId: 'lag-user-2', boardId: demo.publicBoardId }),
      undefined,
    ],
    [
      'by boardId alone',
      (demo: NonNullable<LocalRuntime['demo']>) => ({ boardId: demo.privateBoardId }),
      'private',
    ],
  ] as const)('refuses the link created the moment before the call (%s)', async (_name, selection, board) => {
    const demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
    const body = selection(demo);
    const created = await apiCall(
      runtime,
      demo.apiKey,
      'POST',
      '/api/embed/sessions',
      validBody({
        boardId: board === 'private' ? demo.privateBoardId : demo.publicBoardId,
        userId: 'userId' in body ? body.userId : 'lag-board-user',
      }),
    );
    expect(created.status).toBe(201);
    const hiddenBefore = proxy.hidden();
    const revoked = await apiCall(runtime, demo.apiKey, 'POST', '/api/embed/sessions/revoke', body);
    expect(revoked.status).toBe(200);
    // The call did not see the session (the index hid it), so it could not count it.
    expect(proxy.hidden()).toBeGreaterThan(hiddenBefore);
    expect(revoked.body).toEqual({ revoked: 0 });
    const page = await call(runtime, `/embed?token=${created.body.sessionToken}`, {
      headers: { Accept: 'application/json' },
    });
    expect(page.status).toBe(401);
    expect(page.body).toEqual({ error: 'Unauthorized', message: 'This embed session has been revoked' });
  });
});

describe('a link opened the moment its session is created, while the token index lags', () => {
  it('opens at once: the page reads the session by the id its token derives, not through the index', async () => {
    const demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
    const created = await apiCall(
      runtime,
      demo.apiKey,
      'POST',
      '/api/embed/sessions',
      validBody({ boardId: demo.publicBoardId, userId: 'lag-open' }),
    );
    expect(created.status).toBe(201);
    const hiddenBefore = proxy.hidden();
    const page = await call(runtime, `/embed?token=${created.body.sessionToken}`, {
      headers: { Accept: 'application/json' },
    });
    expect(page.status).toBe(200);
    // Nothing was asked of the lagging index.
    expect(proxy.hidden()).toBe(hiddenBefore);
  });
});
