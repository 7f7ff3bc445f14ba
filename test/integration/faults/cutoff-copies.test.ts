import { describe, expect, it } from 'vitest';
import { CUTOFF_COPIES, cutoffCopyOf } from '#lib/adapters/dynamodb/cutoff-record-items';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { createDemoSession } from '#test/support/demo-sessions';
import type { Fault } from '#test/support/fault-proxy';
import { useRuntimeBehindProxy } from '#test/support/fault-suite';
import { apiCall, call } from '#test/support/local-runtime';
import { MISSING_ANSWERS } from '#test/support/lost-answers';
import { scanItems } from '#test/support/stored-items';

/**
 * A revoke-all writes its cut-off into every copy of each record before it answers, and an embed load
 * reads the one copy its session id picks: with the answer to a copy's write dropped or late (the write
 * landed; the SDK sends it again, the conditional write is refused, the copy is read again and holds the
 * entry), the call still answers 200 and every load is refused, whichever copy it reads. Over HTTP on
 * the local runtime with a fault proxy before its DynamoDB (dynalite, or DynamoDB Local with
 * TEST_DYNAMODB=dynamodb-local).
 */
const env = useRuntimeBehindProxy();

/** Sessions of `userId`, one for each copy its loads read (index: the copy); and how many were created. */
async function oneReadingEachCopy(userId: string): Promise<{ tokens: string[]; created: number }> {
  const byCopy = new Map<number, string>();
  let created = 0;
  while (byCopy.size < CUTOFF_COPIES) {
    if (created >= 200) throw new Error(`${created} sessions read only copies ${[...byCopy.keys()]}`);
    // As many at once as there are copies: a copy is found in about three such rounds.
    const round = await Promise.all(
      Array.from({ length: CUTOFF_COPIES }, () => createDemoSession(env().runtime, userId)),
    );
    created += round.length;
    for (const session of round) {
      const copy = cutoffCopyOf(session.id);
      if (!byCopy.has(copy)) byCopy.set(copy, session.token);
    }
  }
  return { tokens: [...byCopy.entries()].sort(([a], [b]) => a - b).map(([, token]) => token), created };
}

const ROWS: Array<[string, Fault]> = [
  ...MISSING_ANSWERS,
  [
    'the first answers of three copies’ writes come after the deadline',
    { kind: 'late-answer', delayMs: 1_500, count: 3 },
  ],
];

describe('when the answer to a copy’s cut-off write is dropped or late', () => {
  it.each(ROWS)('answers 200 and every copy refuses its loads when %s', async (_name, fault) => {
    const { proxy, runtime, upstream } = env();
    const userId = `copies-${ROWS.findIndex(([, row]) => row === fault)}`;
    const { tokens, created } = await oneReadingEachCopy(userId);
    await proxy.inject(fault, { operation: 'UpdateItem', table: LOCAL_TABLE_NAMES.sessions });
    const seen = proxy.requests.length;
    const revoked = await apiCall(
      runtime,
      String(runtime.demo?.apiKey),
      'POST',
      '/api/embed/sessions/revoke',
      {
        userId,
      },
    );
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toEqual({ revoked: created });
    const faulted = proxy.requests.slice(seen).filter((r) => r.fault !== 'none');
    expect(faulted.length).toBeGreaterThanOrEqual(1);
    await proxy.clear();
    for (const [copy, token] of tokens.entries()) {
      const page = await call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
      expect({ copy, status: page.status }).toEqual({ copy, status: 401 });
    }
    // Each copy of each of the call's two records holds its one entry, once.
    const records = (
      await scanItems(upstream, LOCAL_TABLE_NAMES.sessions, 'attribute_exists(cutoffScope)')
    ).filter((item) => String(item.cutoffScope).includes(userId));
    expect(records).toHaveLength(2 * CUTOFF_COPIES);
    const entries = records.map((item) => Object.keys(item).filter((name) => name.startsWith('entry:')));
    for (const names of entries) expect(names).toHaveLength(1);
  });
});
