import type { LocalRuntime } from '#local/runtime';
import { validBody } from './fixtures';
import { createSessionCall, ensureStatus } from './local-runtime';

/** A session created over HTTP: its id, and the token its embed link carries. */
export interface DemoSession {
  id: string;
  token: string;
}

/**
 * Creates one session of `userId` on the demo's public board with the demo's API key, over HTTP; a call
 * that does not answer 201 fails the test as a setup failure.
 */
export async function createDemoSession(runtime: LocalRuntime, userId: string): Promise<DemoSession> {
  const demo = runtime.demo;
  if (!demo) throw new Error('the runtime has no demo tenant to create sessions with');
  const created = ensureStatus(
    await createSessionCall(runtime, validBody({ boardId: demo.publicBoardId, userId })),
    201,
  );
  return {
    id: String((created.body.session as { id: string }).id),
    token: String(created.body.sessionToken),
  };
}

/** The tokens of `count` sessions of `userId`, created one after another as `createDemoSession` does. */
export async function createDemoSessionTokens(
  runtime: LocalRuntime,
  userId: string,
  count: number,
): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) tokens.push((await createDemoSession(runtime, userId)).token);
  return tokens;
}
