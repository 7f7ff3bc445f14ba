import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#lib/platform/logger';
import { type LocalRuntime, startLocalRuntime } from '#local/runtime';
import { createSessionCall } from '#test/support/local-runtime';

let runtime: LocalRuntime;
const publicBaseUrl = process.env.PUBLIC_BASE_URL;
beforeAll(async () => {
  // The runtime fills PUBLIC_BASE_URL from its own address when unset, as under `npm start`.
  delete process.env.PUBLIC_BASE_URL;
  runtime = await startLocalRuntime({
    port: 0,
    dynamoPort: 0,
    host: '0.0.0.0',
    seed: true,
    logger: createLogger({}, { level: 'error' }),
  });
});
afterAll(async () => {
  await runtime?.close();
  if (publicBaseUrl === undefined) delete process.env.PUBLIC_BASE_URL;
  else process.env.PUBLIC_BASE_URL = publicBaseUrl;
});

describe('HOST=0.0.0.0', () => {
  it('names 127.0.0.1 in its base URL, its DynamoDB endpoint and every embedUrl, never 0.0.0.0', async () => {
    expect(runtime.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(runtime.dynamoEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const created = await createSessionCall(runtime, {
      boardId: runtime.demo?.publicBoardId,
      userId: 'u',
      email: 'u@example.com',
    });
    expect(created.status).toBe(201);
    expect(created.body.embedUrl).toMatch(new RegExp(`^${runtime.baseUrl}/embed\\?token=`));
  });
});
