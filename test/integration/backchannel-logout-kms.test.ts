import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BatchResponse } from '#lib/events/stream';
import { KmsIdTokenSigner } from '#lib/signing/kms';
import { kmsClient } from '#lib/signing/kms-client';
import { loadHandler } from '#test/support/harness';
import { type MotoServer, motoMissing, startMoto } from '#test/support/moto';
import { startWebhookReceiver, type WebhookReceiver } from '#test/support/webhook-receiver';

/**
 * Back-channel logout as the AWS functions do it, with a real KMS API: the delivery worker's handler
 * (functions/webhook-delivery.ts) signs each logout token with an ECC_NIST_P256 key of moto_server and
 * derives its `sub` with moto's HMAC key, and a real HTTP receiver verifies the token with `jose` against
 * the JWKS the discovery handler (functions/discovery.ts) serves from that same key. Only the KMS client's
 * endpoint is redirected to moto; the board is read through a mocked document client, and the queue's
 * SendMessage is captured by aws-sdk-client-mock (no real AWS).
 */
const aws = vi.hoisted(() => ({
  kmsEndpoint: '',
  sent: [] as Array<{ operation: string; input: Record<string, unknown> }>,
  policies: [] as Array<{ allowLoopback: boolean }>,
}));
vi.mock('#lib/webhooks/destination-post', async (importOriginal) => {
  const original = await importOriginal<typeof import('#lib/webhooks/destination-post')>();
  return {
    ...original,
    // The receiver stands in for a board application on the internet, but listens on loopback, which the
    // deployed policy refuses (as it must): the policy the worker builds is recorded, and loopback allowed
    // for this receiver alone. test/unit/lib/webhooks/destination-post.test.ts tests the refusals.
    destinationPost: (...[policy, options]: Parameters<typeof original.destinationPost>) => {
      aws.policies.push(policy);
      return original.destinationPost({ ...policy, allowLoopback: true }, options);
    },
  };
});
vi.mock('#lib/signing/kms-client', async (importOriginal) => {
  const original = await importOriginal<typeof import('#lib/signing/kms-client')>();
  return { ...original, kmsClient: (region: string) => original.kmsClient(region, aws.kmsEndpoint) };
});

const missing = motoMissing();
if (missing) console.warn(`Back-channel logout KMS tests skipped: ${missing}`);

const REGION = 'us-east-1';
/** Loopback http: the rule lets a board's logout URL be the test's receiver, as on the local runtime. */
const ISSUER = 'http://127.0.0.1:3999';
const ddb = mockClient(DynamoDBDocumentClient);
const queue = mockClient(SQSClient);
queue.on(SendMessageCommand).callsFake((input: Record<string, unknown>) => {
  aws.sent.push({ operation: 'SendMessage', input });
  return { MessageId: `m${aws.sent.length}` };
});

type QueueHandler = (event: {
  Records: Array<{ messageId: string; body: string }>;
}) => Promise<BatchResponse>;
type DiscoveryHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

describe.skipIf(missing !== undefined)('back-channel logout on AWS, signed in KMS (moto_server)', () => {
  let moto: MotoServer;
  let receiver: WebhookReceiver;
  const keys = { signing: '', subject: '' };

  beforeAll(async () => {
    moto = await startMoto();
    aws.kmsEndpoint = moto.endpoint;
    const admin = new KMSClient({
      region: REGION,
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const create = async (spec: 'ECC_NIST_P256' | 'HMAC_256') =>
      String(
        (
          await admin.send(
            new CreateKeyCommand({
              KeySpec: spec,
              KeyUsage: spec === 'HMAC_256' ? 'GENERATE_VERIFY_MAC' : 'SIGN_VERIFY',
            }),
          )
        ).KeyMetadata?.Arn,
      );
    keys.signing = await create('ECC_NIST_P256');
    keys.subject = await create('HMAC_256');
    admin.destroy();
    // Refuses the first logout (so it is retried), accepts the next.
    receiver = await startWebhookReceiver((_request, nth) => (nth === 1 ? 503 : 200));
  }, 30_000);
  afterAll(async () => {
    ddb.restore();
    queue.restore();
    vi.unstubAllEnvs();
    await receiver?.close();
    await moto?.close();
  });

  it('POSTs a logout token the receiver verifies against the discovery JWKS, and retries a refused one with a new token', async () => {
    const board = {
      boardId: 'board-logout',
      orgId: 'org-a',
      visibility: 'PUBLIC',
      appUrl: `${receiver.url}/handoff`,
      logoutUrl: `${receiver.url}/backchannel-logout`,
    };
    ddb.on(GetCommand, { TableName: 'test-boards' }).resolves({ Item: board });

    // The JWKS and discovery document as the discovery function serves them.
    const discovery = await loadHandler<DiscoveryHandler>(() => import('#functions/discovery'), {
      PUBLIC_BASE_URL: ISSUER,
      ID_TOKEN_PUBLISHED_KEYS: keys.signing,
    });
    const served = async (resource: string) =>
      JSON.parse((await discovery({ resource } as APIGatewayProxyEvent)).body);
    const jwks = (await served('/.well-known/jwks.json')) as JSONWebKeySet;
    expect(await served('/.well-known/openid-configuration')).toMatchObject({
      issuer: ISSUER,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });

    const worker = await loadHandler<QueueHandler>(() => import('#functions/webhook-delivery'), {
      WEBHOOKS_TABLE: 'test-webhooks',
      BOARDS_TABLE: 'test-boards',
      WEBHOOK_DELIVERY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries',
      PUBLIC_BASE_URL: ISSUER,
      ID_TOKEN_SIGNING_KEY: keys.signing,
      ID_TOKEN_SUBJECT_KEY: keys.subject,
    });
    const logout = {
      eventId: 'evt_00000000000000000000000000000001',
      sessionId: '7a7a7a7a-0000-4000-8000-000000000001',
      boardId: board.boardId,
      userId: 'customer-42',
      // A session another tenant created on the organization's public board: its own subjects.
      tenant: { kind: 'keyOwner', id: 'owner-elsewhere' } as const,
      attempt: 0,
    };
    // As deployed, the worker sends to public internet hosts only.
    expect(aws.policies).toEqual([{ allowLoopback: false }]);
    expect(await worker({ Records: [{ messageId: 'm1', body: JSON.stringify({ logout }) }] })).toEqual({
      batchItemFailures: [],
    });
    // Refused: the same logout waits on the queue for the schedule's first step, with no token in it.
    expect(aws.sent).toHaveLength(1);
    const retry = aws.sent[0]?.input as { MessageBody: string; DelaySeconds: number };
    expect(retry.DelaySeconds).toBe(5);
    expect(JSON.parse(retry.MessageBody)).toEqual({ logout: { ...logout, attempt: 1 } });
    expect(await worker({ Records: [{ messageId: 'm2', body: retry.MessageBody }] })).toEqual({
      batchItemFailures: [],
    });
    expect(aws.sent).toHaveLength(1);

    const requests = await receiver.waitFor(2, '/backchannel-logout');
    const subject = await new KmsIdTokenSigner(
      kmsClient(REGION, moto.endpoint),
      keys.signing,
      keys.subject,
    ).subjectOf(logout.tenant, logout.userId);
    const jtis: unknown[] = [];
    for (const request of requests) {
      expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
      const token = String(new URLSearchParams(request.body).get('logout_token'));
      expect(decodeProtectedHeader(token)).toEqual({
        alg: 'ES256',
        typ: 'logout+jwt',
        kid: keys.signing.split('/').at(-1),
      });
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
        issuer: ISSUER,
        audience: receiver.url,
        algorithms: ['ES256'],
        typ: 'logout+jwt',
        maxTokenAge: '2m',
      });
      expect(payload).toEqual({
        iss: ISSUER,
        aud: receiver.url,
        sub: subject,
        sid: logout.sessionId,
        iat: expect.any(Number),
        exp: (payload.iat as number) + 120,
        jti: expect.any(String),
        events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
      });
      jtis.push(payload.jti);
    }
    expect(new Set(jtis).size).toBe(2);
  }, 30_000);
});
