import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createSessionCall, ensureStatus } from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';

const STAGE_APP = 'http://127.0.0.1:9/stage-board';
const OWN_APP = 'https://own-board.example.test/';

let previous: string | undefined;

beforeAll(() => {
  // The stage default, read by the embed page at start as under `npm start` (BOARD_APP_URL).
  previous = process.env.BOARD_APP_URL;
  process.env.BOARD_APP_URL = STAGE_APP;
});
afterAll(() => {
  if (previous === undefined) delete process.env.BOARD_APP_URL;
  else process.env.BOARD_APP_URL = previous;
});
const runtime = useTestRuntime();
beforeAll(async () => {
  await putPublicBoard(runtime, 'board_own_app', 'org_demo', { name: 'Own', appUrl: OWN_APP });
});

async function handoffOf(boardId: string | undefined) {
  const created = await createSessionCall(runtime, { boardId, userId: 'u-1', email: 'u@example.com' });
  const token = (created.body as { sessionToken: string }).sessionToken;
  const result = await call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
  ensureStatus(result, 200);
  return result.body.handoff as { url: string } | undefined;
}

describe('the stage’s default board application (BOARD_APP_URL)', () => {
  it('hands the users of a board without an app URL of its own to the stage default', async () => {
    expect((await handoffOf(runtime.demo?.publicBoardId))?.url).toBe(STAGE_APP);
  });

  it('lets a board’s own app URL win over the stage default', async () => {
    expect((await handoffOf('board_own_app'))?.url).toBe(OWN_APP);
  });
});
