import { describe, expect, it } from 'vitest';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import { useRuntimeBehindProxy } from '#test/support/fault-suite';
import { validBody } from '#test/support/fixtures';
import { call, createSessionCall } from '#test/support/local-runtime';
import { LOST_ANSWER_WAYS, lostAnswer } from '#test/support/lost-answers';
import { scanItems } from '#test/support/stored-items';

/**
 * The session's PutItem lands, but its answer is lost: the SDK retries the conditional put, which then
 * finds the session it has just written. That is a success, and the caller must get the session.
 */
const env = useRuntimeBehindProxy();

const sessionsWithToken = (token: string) =>
  scanItems(env().upstream, LOCAL_TABLE_NAMES.sessions, 'tokenHash = :h', { ':h': hashCredential(token) });

describe('when DynamoDB loses the answer to the session PutItem after the write landed', () => {
  it.each(LOST_ANSWER_WAYS)('answers 201 with the session it wrote when %s', async (_name, then) => {
    const { proxy, runtime } = env();
    await proxy.inject(lostAnswer(then), { operation: 'PutItem', table: LOCAL_TABLE_NAMES.sessions });
    const seen = proxy.requests.length;
    const created = await createSessionCall(runtime, validBody({ boardId: runtime.demo?.publicBoardId }));
    expect(created.status, created.text).toBe(201);
    // The SDK did retry the put: the write landed once and its retry met it.
    // The sessions table's puts only: the change feed writes the session's events through the same proxy.
    const puts = proxy.requests
      .slice(seen)
      .filter((r) => r.operation === 'PutItem' && r.table === LOCAL_TABLE_NAMES.sessions);
    expect(puts.map((r) => r.fault)).toEqual(['lose-answer', 'none']);

    const token = String(created.body.sessionToken);
    const session = created.body.session as { id: string };
    const stored = await sessionsWithToken(token);
    expect(stored.map((item) => item.id)).toEqual([session.id]);
    const page = await call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
    expect(page.status).toBe(200);
    expect((page.body.session as { id: string }).id).toBe(session.id);
  });
});
