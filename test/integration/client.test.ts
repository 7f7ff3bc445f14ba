import { createClient, EmbedSessionError } from '@embed-session/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { publicBaseUrl, storeIdempotencyRecord, testTarget } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

/** The typed client package, as built by the root pipeline, against the running service. */
const runtime = useTestRuntime();
let api: ReturnType<typeof createClient>;
let boardId: string;

beforeAll(() => {
  boardId = String(runtime.demo?.publicBoardId);
  api = createClient({ baseUrl: runtime.baseUrl, apiKey: String(runtime.demo?.apiKey) });
});

describe('the typed client against the local runtime', () => {
  it('creates, retrieves, lists, revokes one and revokes a user’s sessions', async () => {
    const created = await api.createSession({ boardId, userId: 'client-user', email: 'ada@example.com' });
    expect(created.sessionToken).toBe(created.session.token);
    expect(created.embedUrl).toBe(`${publicBaseUrl(runtime)}/embed?token=${created.sessionToken}`);
    await expect(api.getSession(created.session.id)).resolves.toMatchObject({
      id: created.session.id,
      status: 'active',
    });
    await api.createSession({ boardId, userId: 'client-user', email: 'ada@example.com' });
    const page = await api.listSessions({ userId: 'client-user', limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.nextCursor).toEqual(expect.any(String));
    const all = [];
    for await (const session of api.listAllSessions({ userId: 'client-user', limit: 1 }))
      all.push(session.id);
    expect(all).toHaveLength(2);
    await expect(api.revokeSession(created.session.id)).resolves.toMatchObject({ status: 'revoked' });
    await expect(api.revokeUserSessions({ userId: 'client-user' })).resolves.toEqual({ revoked: 1 });
  });

  // Creating an endpoint derives its secret with KMS's GenerateMac, which the assembly runner does not
  // serve (as the webhook suites, this one runs on the local runtime and DynamoDB Local only).
  it.skipIf(testTarget() === 'assembly')(
    'creates, lists and deletes a webhook endpoint, a delete repeated too; an unknown one is a typed 404',
    async () => {
      const created = await api.createWebhook(
        { url: 'https://127.0.0.1:9/client-hook', events: ['session.revoked'] },
        { idempotencyKey: 'client-hook-1' },
      );
      expect(created.secret).toMatch(/^whsec_/);
      expect(
        await api.createWebhook(
          { url: 'https://127.0.0.1:9/client-hook', events: ['session.revoked'] },
          { idempotencyKey: 'client-hook-1' },
        ),
      ).toEqual(created);
      const second = await api.createWebhook({ url: 'https://127.0.0.1:9/client-hook-2' });
      const page = await api.listWebhooks({ limit: 1 });
      expect(page.data).toHaveLength(1);
      expect(page.nextCursor).toEqual(expect.any(String));
      const all = [];
      for await (const webhook of api.listAllWebhooks({ limit: 1 })) all.push(webhook.id);
      expect(all).toEqual(expect.arrayContaining([created.webhook.id, second.webhook.id]));
      await api.deleteWebhook(second.webhook.id);
      await expect(api.deleteWebhook(created.webhook.id)).resolves.toBeUndefined();
      const left = [];
      for await (const webhook of api.listAllWebhooks()) left.push(webhook.id);
      expect(left).not.toContain(created.webhook.id);
      await expect(api.deleteWebhook(created.webhook.id)).resolves.toBeUndefined();
      await expect(api.deleteWebhook('whe_0123456789abcdef0123456789abcdef')).rejects.toMatchObject({
        status: 404,
        error: 'Not Found',
      });
    },
  );

  // No secret is derived for an endpoint the caller does not have, so this runs on the assembly too.
  it('rotates no secret of an endpoint the caller does not have: a typed 404', async () => {
    await expect(api.rotateWebhookSecret('whe_0123456789abcdef0123456789abcdef')).rejects.toMatchObject({
      status: 404,
      error: 'Not Found',
      message: 'No webhook endpoint with this id was found',
    });
  });

  it.skipIf(testTarget() === 'assembly')(
    'rotates an endpoint’s secret once per Idempotency-Key, answering the same secret to a retry',
    async () => {
      const created = await api.createWebhook({ url: 'https://127.0.0.1:9/client-rotate' });
      const rotated = await api.rotateWebhookSecret(
        created.webhook.id,
        { overlapSeconds: 60 },
        { idempotencyKey: 'client-rotate-1' },
      );
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(created.secret);
      expect(
        await api.rotateWebhookSecret(
          created.webhook.id,
          { overlapSeconds: 60 },
          { idempotencyKey: 'client-rotate-1' },
        ),
      ).toEqual(rotated);
      await api.deleteWebhook(created.webhook.id);
    },
  );

  it('replays a create with the same Idempotency-Key instead of creating a second session', async () => {
    const body = { boardId, userId: 'client-idem', email: 'ada@example.com' };
    const first = await api.createSession(body, { idempotencyKey: 'client-order-1' });
    const second = await api.createSession(body, { idempotencyKey: 'client-order-1' });
    expect(second).toEqual(first);
    const listed = [];
    for await (const session of api.listAllSessions({ userId: 'client-idem' })) listed.push(session);
    expect(listed).toHaveLength(1);
  });

  it('waits out a key an earlier attempt still holds (409, Retry-After), then gets its one session', async () => {
    const body = { boardId, userId: 'client-held', email: 'ada@example.com' };
    const key = 'client-order-held';
    // An earlier attempt whose lease on the key ends in a second, and which wrote nothing else.
    await storeIdempotencyRecord(runtime, String(runtime.demo?.userId), key, JSON.stringify(body), {
      state: 'IN_PROGRESS',
      attemptId: 'an-earlier-attempt',
      lockedUntilMs: Date.now() + 1_000,
    });
    const created = await api.createSession(body, { idempotencyKey: key });
    expect(created.session.userId).toBe('client-held');
    const listed = [];
    for await (const session of api.listAllSessions({ userId: 'client-held' })) listed.push(session);
    expect(listed.map((session) => session.id)).toEqual([created.session.id]);
  });

  it('throws one typed error with the status, the error, the message and the headers', async () => {
    const error = await api.getSession('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedSessionError);
    expect(error).toMatchObject({
      status: 404,
      error: 'Not Found',
      message: 'No session with this id was found',
    });
    expect((error as EmbedSessionError).headers.get('cache-control')).toBe('no-store');
    const unauthorized = createClient({ baseUrl: runtime.baseUrl, apiKey: `esk_${'x'.repeat(43)}` });
    await expect(unauthorized.getSession('x')).rejects.toMatchObject({ status: 401, error: 'Unauthorized' });
  });
});
