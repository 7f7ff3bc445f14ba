import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { SessionEvent } from '#lib/domain/events';
import { useRuntimeBehindProxy } from '#test/support/fault-suite';
import { validBody } from '#test/support/fixtures';
import { apiCall, type CallResult, call, createSessionCall } from '#test/support/local-runtime';
import { LATE_ON_EVERY_ATTEMPT, MISSING_ANSWERS } from '#test/support/lost-answers';

// The functions' AWS clients run with the short limits: a late DynamoDB costs a fraction of a second.
vi.mock('#lib/platform/aws-clients', async (original) =>
  (await import('#test/support/short-aws-limits')).withShortLimits(await original()),
);

/**
 * Retries converge for the embed page's `openedAt` write (the session.opened event): its conditional
 * UpdateItem lands, and its answer is lost or comes after the attempt's deadline. The first load still
 * answers 200 when the SDK's retry meets the write; when every answer is late it answers 503, and the
 * load after it (the caller's retry) finds the opening recorded. Either way one `openedAt`, the first
 * load's, and one session.opened.
 */
const env = useRuntimeBehindProxy();

async function newSession(userId: string): Promise<{ id: string; token: string }> {
  const { runtime } = env();
  const created = await createSessionCall(
    runtime,
    validBody({ boardId: runtime.demo?.publicBoardId, userId }),
  );
  expect(created.status, created.text).toBe(201);
  return { id: (created.body.session as { id: string }).id, token: String(created.body.sessionToken) };
}

const load = (token: string) =>
  call(env().runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });

async function storedOpenedAt(id: string): Promise<unknown> {
  const db = createDocumentClient({ endpoint: env().upstream, region: 'local' });
  try {
    const { Item } = await db.send(
      new GetCommand({ TableName: LOCAL_TABLE_NAMES.sessions, Key: { id }, ConsistentRead: true }),
    );
    return Item?.openedAt;
  } finally {
    db.destroy();
  }
}

/** The session's events, once its session.opened is recorded: the change feed is polled until it is. */
function eventsOnceOpened(id: string): Promise<SessionEvent[]> {
  const { runtime } = env();
  return vi.waitFor(
    async () => {
      await runtime.events?.poll();
      const page = await apiCall(
        runtime,
        String(runtime.demo?.apiKey),
        'GET',
        `/api/embed/events?sessionId=${id}`,
      );
      expect(page.status, page.text).toBe(200);
      const events = page.body.data as SessionEvent[];
      expect(events.map((event) => event.type)).toContain('session.opened');
      return events;
    },
    { timeout: 15_000, interval: 50 },
  );
}

/** The embed page's UpdateItems on the sessions table since `from`, and what the proxy did to each. */
function openedWrites(from: number): string[] {
  return env()
    .proxy.requests.slice(from)
    .filter((r) => r.operation === 'UpdateItem' && r.table === LOCAL_TABLE_NAMES.sessions)
    .map((r) => r.fault);
}

async function expectOneOpening({ id, token }: { id: string; token: string }, before: number, after: number) {
  const openedAt = await storedOpenedAt(id);
  expect(typeof openedAt).toBe('string');
  // The first load's time: set by the write that landed first, never replaced by a retry.
  expect(Date.parse(String(openedAt))).toBeGreaterThanOrEqual(before);
  expect(Date.parse(String(openedAt))).toBeLessThanOrEqual(after);
  const events = await eventsOnceOpened(id);
  const opened = events.filter((event) => event.type === 'session.opened');
  expect(opened).toHaveLength(1);
  expect(opened[0]?.occurredAt).toBe(openedAt);
  expect(opened[0]?.data.session.id).toBe(id);
  // Later loads write nothing more and change nothing.
  const seen = env().proxy.requests.length;
  expect((await load(token)).status).toBe(200);
  expect(openedWrites(seen)).toEqual([]);
  expect(await storedOpenedAt(id)).toBe(openedAt);
}

describe('the first load of an embed link whose openedAt write lands but its answer goes missing', () => {
  it.each(MISSING_ANSWERS)('answers 200 and records one opening when %s', async (name, fault) => {
    const link = await newSession(`opened-${fault.kind}-${name.length}`);
    await env().proxy.inject(fault, { operation: 'UpdateItem', table: LOCAL_TABLE_NAMES.sessions });
    const seen = env().proxy.requests.length;
    const before = Date.now();
    const first = await load(link.token);
    const after = Date.now();
    expect(first.status, first.text).toBe(200);
    // The write landed, its answer went missing, and the SDK's retry met it.
    expect(openedWrites(seen)).toEqual([fault.kind, 'none']);
    await env().proxy.clear();
    await expectOneOpening(link, before, after);
  });

  it('answers 503 when every answer is late, and the next load is 200 with that opening, unwritten again', async () => {
    const link = await newSession('opened-all-late');
    await env().proxy.inject(LATE_ON_EVERY_ATTEMPT, {
      operation: 'UpdateItem',
      table: LOCAL_TABLE_NAMES.sessions,
    });
    const before = Date.now();
    const first: CallResult = await load(link.token);
    const after = Date.now();
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    await env().proxy.clear();
    const seen = env().proxy.requests.length;
    const retry = await load(link.token);
    expect(retry.status, retry.text).toBe(200);
    // The consistent read shows the opening the first load wrote: the retry writes nothing.
    expect(openedWrites(seen)).toEqual([]);
    await expectOneOpening(link, before, after);
  });
});
