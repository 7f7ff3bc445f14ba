import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionCall } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

const publicBaseUrl = process.env.PUBLIC_BASE_URL;
beforeAll(() => {
  // The runtime fills PUBLIC_BASE_URL from its own address when unset, as under `npm start`.
  delete process.env.PUBLIC_BASE_URL;
});
afterAll(() => {
  if (publicBaseUrl === undefined) delete process.env.PUBLIC_BASE_URL;
  else process.env.PUBLIC_BASE_URL = publicBaseUrl;
});
const runtime = useTestRuntime({ host: '0.0.0.0' });

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
