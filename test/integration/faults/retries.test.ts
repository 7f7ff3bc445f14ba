import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { Fault } from '#test/support/fault-proxy';
import { useRuntimeBehindProxy } from '#test/support/fault-suite';
import { validBody } from '#test/support/fixtures';
import { type CallResult, call, createSessionCall } from '#test/support/local-runtime';
import { LATE_ON_EVERY_ATTEMPT, LOST_ANSWER_WAYS, lostAnswer } from '#test/support/lost-answers';
import { scanItems } from '#test/support/stored-items';

// The functions' AWS clients run with the short limits: a late DynamoDB costs a fraction of a second.
vi.mock('#lib/platform/aws-clients', async (original) =>
  (await import('#test/support/short-aws-limits')).withShortLimits(await original()),
);

/**
 * Retries converge: when DynamoDB applies a write and its answer is lost or comes too late, the request
 * or its retry (honouring `Retry-After`) ends in exactly one effect, the one the caller asked for.
 */
const env = useRuntimeBehindProxy();

/** Injects `fault` on the `operation` requests to `table`, behind the runtime. */
const inject = (fault: Fault, operation: string, table: string) =>
  env().proxy.inject(fault, { operation, table });

/**
 * The runtime's clock is the test's: a caller's wait of `Retry-After` seconds moves it on at once rather
 * than sleeping them. Only `Date` is faked, and it keeps running, so the servers' and the SDK's timers work
 * as ever; the leases of Idempotency-Keys, which are what a caller waits out, read `Date`.
 */
beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
});
afterAll(() => {
  vi.useRealTimers();
});

/** A caller's wait of `Retry-After` seconds, on the runtime's clock. */
function waitRetryAfter(seconds: number): void {
  vi.setSystemTime(Date.now() + seconds * 1000);
}

/** How many times a caller tries in all before it gives up: a retry must converge within them. */
const MAX_TRIES = 4;

/** What a caller that honours `Retry-After` sees: every answer, until one it should not retry. */
async function withRetries(request: () => Promise<CallResult>): Promise<CallResult[]> {
  const answers: CallResult[] = [];
  for (;;) {
    const answer = await request();
    answers.push(answer);
    const retryAfter = answer.headers.get('retry-after');
    const retryable = answer.status === 409 || answer.status === 503;
    if (!retryable || retryAfter === null || answers.length === MAX_TRIES) break;
    waitRetryAfter(Number(retryAfter));
  }
  return answers;
}

async function withTable<T>(use: (db: ReturnType<typeof createDocumentClient>) => Promise<T>): Promise<T> {
  const db = createDocumentClient({ endpoint: env().upstream, region: 'local' });
  try {
    return await use(db);
  } finally {
    db.destroy();
  }
}

/** Every stored session of this external user, read from the DynamoDB behind the proxy. */
const sessionsOfUser = (userId: string) =>
  scanItems(env().upstream, LOCAL_TABLE_NAMES.sessions, 'userId = :u', { ':u': userId });

function storedSession(id: string): Promise<Record<string, unknown> | undefined> {
  return withTable(async (db) => {
    const { Item } = await db.send(
      new GetCommand({ TableName: LOCAL_TABLE_NAMES.sessions, Key: { id }, ConsistentRead: true }),
    );
    return Item;
  });
}

function keyedCreate(userId: string, idempotencyKey: string, extra: Record<string, unknown> = {}) {
  const { runtime } = env();
  const body = JSON.stringify(validBody({ boardId: runtime.demo?.publicBoardId, userId, ...extra }));
  return () =>
    call(runtime, '/api/embed/sessions', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${runtime.demo?.apiKey}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': idempotencyKey,
      },
      body,
    });
}

/** Exactly one session for the user, and the answer's session is that one. */
async function expectOneSession(userId: string, answer: CallResult) {
  expect(answer.status, answer.text).toBe(201);
  const session = answer.body.session as { id: string; createdAt: string };
  const stored = await sessionsOfUser(userId);
  expect(stored.map((item) => item.id)).toEqual([session.id]);
  expect(stored[0]?.createdAt).toBe(session.createdAt);
  const page = await call(env().runtime, `/embed?token=${answer.body.sessionToken}`, {
    headers: { Accept: 'application/json' },
  });
  expect(page.status).toBe(200);
  expect((page.body.session as { id: string }).id).toBe(session.id);
}

describe('a keyed create whose Idempotency-Key claim was written but its answer lost', () => {
  it.each(LOST_ANSWER_WAYS)('recognises its own claim and answers 201 when %s', async (_name, then) => {
    const userId = `lost-claim-${then}`;
    await inject(lostAnswer(then), 'PutItem', LOCAL_TABLE_NAMES.idempotency);
    const answers = await withRetries(keyedCreate(userId, `claim-${then}`));
    expect(answers.map((a) => a.status)).toEqual([201]);
    await expectOneSession(userId, answers[0] as CallResult);
  });
});

describe('a keyed create whose session write lands but answers after the deadline', () => {
  it('answers 503, and its retry meets its own session: one session, its 201', async () => {
    const userId = 'late-session-write';
    // Every attempt of the SDK is late, so the request runs out of attempts: 503.
    await inject(LATE_ON_EVERY_ATTEMPT, 'PutItem', LOCAL_TABLE_NAMES.sessions);
    const answers = await withRetries(keyedCreate(userId, 'late-session'));
    expect(answers[0]?.status, answers[0]?.text).toBe(503);
    const last = answers.at(-1) as CallResult;
    await expectOneSession(userId, last);

    // And later repeats replay that same answer.
    const replay = await keyedCreate(userId, 'late-session')();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.sessionToken).toBe(last.body.sessionToken);
  });
});

describe('a keyed create whose Idempotency-Key claim answers after the deadline', () => {
  it('ends in one session and its 201 within the retries', async () => {
    const userId = 'late-claim';
    await inject(LATE_ON_EVERY_ATTEMPT, 'PutItem', LOCAL_TABLE_NAMES.idempotency);
    const answers = await withRetries(keyedCreate(userId, 'late-claim'));
    await expectOneSession(userId, answers.at(-1) as CallResult);
  });
});

describe('a browser-bound link whose bind was written but its answer lost', () => {
  const bindingLink = async (userId: string) => {
    const { runtime } = env();
    const created = await createSessionCall(
      runtime,
      validBody({ boardId: runtime.demo?.publicBoardId, userId, bindToBrowser: true }),
    );
    expect(created.status).toBe(201);
    return {
      token: String(created.body.sessionToken),
      id: (created.body.session as { id: string }).id,
    };
  };
  const open = (token: string, cookie?: string) =>
    call(env().runtime, `/embed?token=${token}`, {
      headers: { Accept: 'application/json', ...(cookie ? { Cookie: cookie } : {}) },
    });
  const cookieOf = (answer: CallResult) => answer.headers.get('set-cookie')?.split(';')[0];

  it('recognises its own binding: 200 with the cookie, and only that browser opens it later', async () => {
    const { token } = await bindingLink('lost-bind');
    const then = 'internal-error';
    await inject(lostAnswer(then), 'UpdateItem', LOCAL_TABLE_NAMES.sessions);
    const first = await open(token);
    expect(first.status, first.text).toBe(200);
    const cookie = cookieOf(first);
    expect(cookie).toMatch(/^__Host-embed_binding=/);
    expect((await open(token, cookie)).status).toBe(200);
    expect((await open(token)).status).toBe(401);
  });

  it('answers 503 leaving no binding behind when every answer is late, and the next load binds', async () => {
    const { token, id } = await bindingLink('late-bind');
    await inject(LATE_ON_EVERY_ATTEMPT, 'UpdateItem', LOCAL_TABLE_NAMES.sessions);
    const first = await open(token);
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    expect((await storedSession(id))?.bindingHash).toBeUndefined();
    const next = await open(token);
    expect(next.status, next.text).toBe(200);
    expect(cookieOf(next)).toMatch(/^__Host-embed_binding=/);
  });
});
