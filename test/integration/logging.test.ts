import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, createSessionCall } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

const lines: string[] = [];

beforeAll(() => {
  // Most verbose level, so any line that could leak a credential is written.
  process.env.LOG_LEVEL = 'debug';
});
const runtime = useTestRuntime();
beforeAll(() => {
  // Captured, not echoed: the lines are the subject of the test, not output for the reader.
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
});
afterAll(() => {
  vi.restoreAllMocks();
});

describe('logs', () => {
  it('never contain API keys, session tokens or request bodies, and carry the request id', async () => {
    const apiKey = runtime.demo?.apiKey as string;
    const email = 'secret.person@example.com';
    const created = await createSessionCall(runtime, {
      boardId: runtime.demo?.publicBoardId,
      userId: 'u',
      email,
    });
    const token = created.body.sessionToken as string;
    await createSessionCall(runtime, { boardId: 'missing', userId: 'u', email });
    await createSessionCall(runtime, { boardId: runtime.demo?.otherOrgBoardId, userId: 'u', email });
    await createSessionCall(runtime, { boardId: 'x', userId: 'u', email: 'not-an-email' });
    await createSessionCall(
      runtime,
      { boardId: 'x', userId: 'u', email },
      { Authorization: `Bearer ${apiKey}x` },
    );
    await call(runtime, `/embed?token=${token}`);

    expect(token).toMatch(/^[\w-]{32}$/);
    expect(lines.length).toBeGreaterThan(0);
    const all = lines.join('\n');
    expect(all).not.toContain(apiKey);
    expect(all).not.toContain(apiKey.slice(4, 20));
    expect(all).not.toContain(token);
    expect(all).not.toContain(email);

    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const rejections = parsed.filter((l) => l.message === 'request rejected');
    expect(rejections.length).toBeGreaterThanOrEqual(3);
    expect(rejections.every((l) => typeof l.requestId === 'string' && l.requestId !== '')).toBe(true);
  });
});

describe('request ids', () => {
  it('name every answer, a fresh one per request, whether a function or the gateway made it', async () => {
    const answers = [
      await call(runtime, '/health'),
      await call(runtime, '/health'),
      await call(runtime, '/no-such-route'),
      await createSessionCall(runtime, { boardId: 'x' }, { Authorization: '' }),
      await call(runtime, '/embed?token=nope'),
    ];
    const ids = answers.map((answer) => answer.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[\w-]{8,}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is on every log line of its request', async () => {
    lines.length = 0;
    const rejected = await createSessionCall(runtime, { boardId: 'x', userId: 'u', email: 'not-an-email' });
    expect(rejected.status).toBe(400);
    const id = rejected.headers.get('x-request-id');
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.length).toBeGreaterThan(0);
    expect(parsed.every((line) => line.requestId === id)).toBe(true);
  });
});
