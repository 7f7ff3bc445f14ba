import { describe, expect, it } from 'vitest';
import { CUTOFF_COPIES } from '#lib/adapters/dynamodb/cutoff-record-items';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { createDemoSessionTokens } from '#test/support/demo-sessions';
import { useRuntimeBehindProxy } from '#test/support/fault-suite';
import { apiCall, call } from '#test/support/local-runtime';
import { LOST_ANSWER_WAYS, lostAnswer } from '#test/support/lost-answers';
import { scanItems } from '#test/support/stored-items';

/**
 * A revoke-all's cut-off write lands, but its answer is lost: the SDK sends the same write again, which
 * is conditional on the record's revision it read, so it is refused; the write reads the record again,
 * meets its own entry (named after the call's cut-off id) and leaves exactly one cut-off behind.
 */
const env = useRuntimeBehindProxy();

async function cutoffEntries(): Promise<string[]> {
  const items = await scanItems(env().upstream, LOCAL_TABLE_NAMES.sessions, 'attribute_exists(cutoffScope)');
  return items.flatMap((item) => Object.keys(item).filter((name) => name.startsWith('entry:')));
}

describe('when DynamoDB loses the answer to a revoke-all’s cut-off write after it landed', () => {
  it.each(LOST_ANSWER_WAYS)('answers 200 with the count and one cut-off when %s', async (_name, then) => {
    const { proxy, runtime } = env();
    const demo = runtime.demo as NonNullable<typeof runtime.demo>;
    const userId = `lost-${then}`;
    const tokens = await createDemoSessionTokens(runtime, userId, 2);
    const entriesBefore = (await cutoffEntries()).length;
    await proxy.inject(lostAnswer(then), { operation: 'UpdateItem', table: LOCAL_TABLE_NAMES.sessions });
    const seen = proxy.requests.length;
    const revoked = await apiCall(runtime, demo.apiKey, 'POST', '/api/embed/sessions/revoke', { userId });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toEqual({ revoked: 2 });
    // The sessions table's updates only: the change feed writes events meanwhile, through the same proxy.
    const writes = proxy.requests
      .slice(seen)
      .filter((r) => r.operation === 'UpdateItem' && r.table === LOCAL_TABLE_NAMES.sessions);
    // One write per copy of each scope's record (the caller's own sessions of the user, its one
    // organization's), before the count and after it: the one whose answer was lost was sent again and
    // answered. The logouts' pass, running meanwhile, may raise a record's expiry (more updates, no entry).
    const lost = writes.filter((r) => r.fault === 'lose-answer').length;
    expect(lost).toBeGreaterThanOrEqual(1);
    expect(writes.filter((r) => r.fault === 'none').length).toBeGreaterThanOrEqual(2 * 2 * CUTOFF_COPIES);
    // Two scopes, the call's one entry in each copy (its last write moved it): the retried write met its
    // own entry and added none.
    expect((await cutoffEntries()).length - entriesBefore).toBe(2 * CUTOFF_COPIES);
    for (const token of tokens) {
      const page = await call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
      expect(page.status).toBe(401);
    }
  });
});
