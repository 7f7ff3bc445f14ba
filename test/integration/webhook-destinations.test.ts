/**
 * The destination policy over HTTP, on a local runtime as `npm start` runs it by default (loopback
 * receivers refused): POST /api/embed/webhooks refuses every URL that points inside a network, in every
 * notation the issue found accepted, with a 400 naming why; and a delivery whose endpoint was stored
 * anyway (as if its name had rebound since) is refused when it is sent, logged, and never reaches the
 * receiver, while the runtime keeps delivering everything else.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoWebhookRepository } from '#lib/adapters/dynamodb/webhooks';
import { ALL_EVENT_TYPES } from '#lib/domain/webhook';
import type { LocalRuntime } from '#local/runtime';
import { createSessionAs } from '#test/support/create-session-as';
import { apiCall } from '#test/support/local-runtime';
import { memoryLogger } from '#test/support/logs';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { startWebhookReceiver, type WebhookReceiver } from '#test/support/webhook-receiver';

const logs = memoryLogger();
const runtime = useTestRuntime({ loopbackReceivers: false, logger: logs.logger });
let receiver: WebhookReceiver;
let demo: NonNullable<LocalRuntime['demo']>;

beforeAll(async () => {
  demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const create = (url: string) => apiCall(runtime, demo.apiKey, 'POST', '/api/embed/webhooks', { url });

describe('registering an endpoint: public internet hosts only', () => {
  it.each([
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['https://2852039166/', '169.254.169.254 is a link-local address'],
    ['https://10.0.0.1/', '10.0.0.1 is a private address'],
    ['https://192.168.1.20/hook', '192.168.1.20 is a private address'],
    ['https://100.64.0.7/hook', '100.64.0.7 is a shared (carrier-grade NAT) address'],
    ['https://[fd00:ec2::254]/', '[fd00:ec2::254] is a unique-local address'],
    [
      'https://[::ffff:127.0.0.1]/',
      '[::ffff:7f00:1] is an IPv4-mapped address of 127.0.0.1, a loopback address',
    ],
    [
      'https://[::ffff:7f00:1]/',
      '[::ffff:7f00:1] is an IPv4-mapped address of 127.0.0.1, a loopback address',
    ],
    [
      'https://[64:ff9b::a9fe:a9fe]/',
      '[64:ff9b::a9fe:a9fe] is a NAT64 address of 169.254.169.254, a link-local address',
    ],
    ['https://0.0.0.0/', '0.0.0.0 is an unspecified address'],
    ['https://[::]/', '[::] is the unspecified address'],
    ['https://224.0.0.251/', '224.0.0.251 is a multicast address'],
    ['https://255.255.255.255/', '255.255.255.255 is a broadcast address'],
    [
      'https://metadata/computeMetadata/v1/',
      'metadata is a single-label name, which resolves only inside a network',
    ],
    [
      'https://metadata.google.internal/',
      'metadata.google.internal is under .internal, which resolves only inside a network',
    ],
  ])('refuses %s with a 400 saying why', async (url, reason) => {
    const result = await create(url);
    expect(result.status).toBe(400);
    expect(result.body).toEqual({
      error: 'Bad Request',
      message: `url must point to the public internet: ${reason}`,
    });
  });

  it.each([
    ['https://[::1]/', '[::1] is a loopback address'],
    ['https://localhost/', 'localhost is a loopback name'],
    ['https://api.localhost./', 'api.localhost. is a loopback name'],
    ['https://127.1/', '127.0.0.1 is a loopback address'],
    ['https://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['https://017700000001/', '127.0.0.1 is a loopback address'],
  ])('refuses the loopback %s unless the operator allows it, saying how', async (url, reason) => {
    const result = await create(url);
    expect(result.status).toBe(400);
    expect(result.body.message).toBe(
      `url must point to the public internet: ${reason} (WEBHOOK_ALLOW_LOOPBACK=1 allows a receiver on this machine, on the local runtime only)`,
    );
  });

  it('refuses loopback http, whose only use is a receiver on this machine', async () => {
    const result = await create(`${receiver.url}/hook`);
    expect(result.status).toBe(400);
    expect(result.body.message).toBe(`url must use https, got "${receiver.url}/hook"`);
  });

  it('accepts a public host', async () => {
    const result = await create('https://hooks.example.com/in');
    expect(result.status, result.text).toBe(201);
    await apiCall(
      runtime,
      demo.apiKey,
      'DELETE',
      `/api/embed/webhooks/${(result.body.webhook as { id: string }).id}`,
    );
  });
});

describe('delivering: checked again when sent', () => {
  it('logs and counts a delivery whose destination is refused, and sends it nothing', async () => {
    // An endpoint stored as a name that resolved publicly at registration and now answers loopback would
    // be: its URL is the receiver's, stored without the API's check.
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    const path = `/rebound-${randomUUID()}`;
    const endpointId = `whe_${randomUUID().replaceAll('-', '')}`;
    try {
      await new DynamoWebhookRepository(db, runtime.tables.webhooks).create(
        {
          id: endpointId,
          ownerUserId: demo.userId,
          url: `${receiver.url}${path}`,
          events: [...ALL_EVENT_TYPES],
          description: null,
          createdAt: new Date().toISOString(),
          createdByKeyId: demo.keyId,
        },
        { maxPerOwner: 16 },
      );
      await createSessionAs(runtime, demo);
      await vi.waitFor(
        () =>
          expect(logs.lines()).toContainEqual(
            expect.objectContaining({
              level: 'warn',
              message: 'webhook delivery refused: its destination is not on the public internet; not sent',
              endpointId,
              reason: '127.0.0.1 is a loopback address',
            }),
          ),
        { timeout: 10_000, interval: 50 },
      );
      expect(receiver.received.filter((request) => request.path === path)).toEqual([]);
    } finally {
      await new DynamoWebhookRepository(db, runtime.tables.webhooks).delete(
        demo.userId,
        endpointId,
        new Date().toISOString(),
      );
      db.destroy();
    }
  });
});
