import { createPrivateKey } from 'node:crypto';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoKeyringStore } from '#lib/adapters/dynamodb/keyring';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import type { BatchResponse } from '#lib/adapters/dynamodb/stream-records';
import { KeyRotation, KeyringSigner } from '#lib/adapters/signing/keyring-keys';
import { kmsClient } from '#lib/adapters/signing/kms-client';
import { KmsKeyEncryption } from '#lib/adapters/signing/kms-key-encryption';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import { DependencyUnavailableError } from '#lib/domain/errors';
import { LOCAL_ROTATION } from '#lib/domain/keyring';
import { systemClock } from '#lib/platform/system';
import { ensureTables } from '#local/dynamodb';
import { embedEvent, lambdaContext } from '#test/support/events';
import { type FaultProxy, startFaultProxy } from '#test/support/fault-proxy';
import { storedSession } from '#test/support/fixtures';
import { loadHandler } from '#test/support/harness';
import { type MotoServer, motoMissing, startMoto } from '#test/support/moto';
import { startTestDynamo } from '#test/support/test-dynamo';
import { startWebhookReceiver, type WebhookReceiver } from '#test/support/webhook-receiver';

/**
 * The keyring on AWS's terms, with a real KMS API (moto_server) behind a proxy that counts every KMS
 * request, and a real DynamoDB engine (dynalite, or DynamoDB Local): the rotation function makes the
 * keyring (one `Encrypt`), then one warm embed page instance hands off 1,000 times and one warm delivery
 * worker signs 1,000 logout tokens, each with at most one KMS request in total (`Decrypt`, on first use).
 * The tokens verify against the JWKS the discovery function serves, which calls KMS not at all.
 */
const aws = vi.hoisted(() => ({ kmsEndpoint: '' }));
vi.mock('#lib/adapters/signing/kms-client', async (importOriginal) => {
  const original = await importOriginal<typeof import('#lib/adapters/signing/kms-client')>();
  return { ...original, kmsClient: (region: string) => original.kmsClient(region, aws.kmsEndpoint) };
});
vi.mock('#lib/adapters/outbound-http/destination-post', async (importOriginal) => {
  const original = await importOriginal<typeof import('#lib/adapters/outbound-http/destination-post')>();
  return {
    ...original,
    // The receiver stands in for a board application on the internet but listens on loopback, which the
    // deployed policy refuses: allowed here for it alone (test/unit/lib/adapters/outbound-http/destination-post.test.ts
    // tests the refusals).
    destinationPost: (...[policy, options]: Parameters<typeof original.destinationPost>) =>
      original.destinationPost({ ...policy, allowLoopback: true }, options),
  };
});

const missing = motoMissing();
if (missing) console.warn(`Keyring KMS request count tests skipped: ${missing}`);

const REGION = 'us-east-1';
/** Loopback http: the rule lets a board's logout URL be the test's receiver, as on the local runtime. */
const ISSUER = 'http://127.0.0.1:3999';
const APP_URL = 'https://board-app.example.com/handoff';
const TOKEN = 'keyringKmsTestSessionToken000000';
const LOADS = 1_000;
const LOGOUTS = 1_000;

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type QueueHandler = (event: {
  Records: Array<{ messageId: string; body: string }>;
}) => Promise<BatchResponse>;

describe.skipIf(missing !== undefined)(
  'the keyring with KMS (moto_server): no KMS call on a warm instance',
  () => {
    let moto: MotoServer;
    let kms: FaultProxy;
    let dynamo: { endpoint: string; close(): Promise<void> };
    let receiver: WebhookReceiver;
    let keyArn = '';
    const queue = mockClient(SQSClient);
    queue.on(SendMessageCommand).resolves({ MessageId: 'm' });

    /** KMS requests the proxy forwarded since `from`, by operation. */
    const kmsCalls = (from = 0) => kms.requests.slice(from).map((request) => request.operation);

    const env = () => ({
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      AWS_REGION: REGION,
      SIGNING_KEYS_TABLE: LOCAL_TABLE_NAMES.signingKeys,
      ID_TOKEN_KEYRING_KEY: keyArn,
    });

    /** The JWKS as the discovery function serves it. */
    async function servedJwks(): Promise<JSONWebKeySet> {
      const discovery = await loadHandler<ProxyHandler>(() => import('#functions/discovery'), {
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        AWS_REGION: REGION,
        SIGNING_KEYS_TABLE: LOCAL_TABLE_NAMES.signingKeys,
        PUBLIC_BASE_URL: ISSUER,
      });
      const answer = await discovery(
        { resource: '/.well-known/jwks.json' } as APIGatewayProxyEvent,
        lambdaContext('jwks', 10_000),
      );
      return JSON.parse(answer.body) as JSONWebKeySet;
    }

    beforeAll(async () => {
      [moto, dynamo] = await Promise.all([startMoto(), startTestDynamo()]);
      kms = await startFaultProxy(moto.endpoint);
      aws.kmsEndpoint = kms.endpoint;
      await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
      const admin = new KMSClient({
        region: REGION,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      const created = await admin.send(
        new CreateKeyCommand({ KeySpec: 'SYMMETRIC_DEFAULT', KeyUsage: 'ENCRYPT_DECRYPT' }),
      );
      keyArn = String(created.KeyMetadata?.Arn);
      admin.destroy();
      receiver = await startWebhookReceiver(() => 200);
      const db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
      await new DynamoBoardRepository(db, LOCAL_TABLE_NAMES.boards).put({
        boardId: 'board-app',
        orgId: 'org-a',
        visibility: 'PUBLIC',
        name: 'Roadmap',
        appUrl: APP_URL,
        logoutUrl: `${receiver.url}/backchannel-logout`,
      } as never);
      await new DynamoSessionRepository(db, LOCAL_TABLE_NAMES.sessions).create(
        storedSession({
          id: '7a7a7a7a-0000-4000-8000-000000000001',
          tokenHash: hashCredential(TOKEN),
          boardId: 'board-app',
          orgId: 'org-a',
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      );
      db.destroy();
    }, 60_000);
    afterAll(async () => {
      queue.restore();
      vi.unstubAllEnvs();
      await receiver?.close();
      await kms?.close();
      await moto?.close();
      await dynamo?.close();
    });

    it('makes the keyring in the rotation function with one Encrypt, and stores nothing of it in plain text', async () => {
      const rotate = await loadHandler<() => Promise<{ outcome: string; kids: string[] }>>(
        () => import('#functions/key-rotation'),
        env(),
      );
      const from = kms.requests.length;
      expect((await rotate()).outcome).toBe('created');
      expect((await rotate()).outcome).toBe('not-due');
      expect(kmsCalls(from)).toEqual(['Encrypt']);
      const db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
      const keyring = await new DynamoKeyringStore(db, LOCAL_TABLE_NAMES.signingKeys).read();
      db.destroy();
      expect(keyring?.keys).toHaveLength(1);
      // The sealing private key is KMS ciphertext: no private key can be read from it. (Its first byte
      // says nothing: moto's ciphertext opens with the key's id, which may start with "0", DER's 0x30.)
      const sealed = Buffer.from(keyring?.sealingPrivateKey ?? '', 'base64');
      expect(sealed.length).toBeGreaterThan(0);
      expect(() => createPrivateKey({ key: sealed, format: 'der', type: 'pkcs8' })).toThrow();
      expect(JSON.stringify(keyring)).not.toContain('"d"');
    });

    it(`hands off ${LOADS} times on one warm embed page instance with at most one KMS request in total`, async () => {
      const embed = await loadHandler<ProxyHandler>(() => import('#functions/embed-page'), {
        ...env(),
        SESSIONS_TABLE: LOCAL_TABLE_NAMES.sessions,
        BOARDS_TABLE: LOCAL_TABLE_NAMES.boards,
        PUBLIC_BASE_URL: ISSUER,
      });
      const from = kms.requests.length;
      let idToken = '';
      for (let i = 0; i < LOADS; i++) {
        const answer = await embed(embedEvent({ token: TOKEN }), lambdaContext(`load-${i}`, 10_000));
        expect(answer.statusCode).toBe(200);
        const match = /name="id_token" value="([^"]+)"/.exec(answer.body);
        expect(match, answer.body.slice(0, 300)).not.toBeNull();
        idToken = match?.[1] ?? '';
      }
      expect(kmsCalls(from)).toEqual(['Decrypt']);

      // The discovery function publishes the key with no KMS request, and the token verifies against it.
      const before = kms.requests.length;
      const jwks = await servedJwks();
      expect(kmsCalls(before)).toEqual([]);
      const { payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
        issuer: ISSUER,
        audience: new URL(APP_URL).origin,
        algorithms: ['ES256'],
      });
      expect(decodeProtectedHeader(idToken).kid).toBe(jwks.keys[0]?.kid);
      expect(payload.board_id).toBe('board-app');
    }, 120_000);

    it('fails as an outage (a 503) while KMS fails, and decrypts on the next use once it is back', async () => {
      const db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
      const store = new DynamoKeyringStore(db, LOCAL_TABLE_NAMES.signingKeys);
      const encryption = new KmsKeyEncryption(kmsClient(REGION, kms.endpoint), keyArn);
      // The keyring exists (made here when this test runs alone): only KMS can fail below.
      await new KeyRotation(store, encryption, systemClock, LOCAL_ROTATION).scheduled();
      const signer = new KeyringSigner(store, encryption, systemClock);
      await kms.inject({ kind: 'internal-error' });
      try {
        const failure = await signer.subjectOf({ kind: 'organization', id: 'org-a' }, 'u').catch((e) => e);
        expect(failure).toBeInstanceOf(DependencyUnavailableError);
        // KMS's own failure, not a keyring that is missing.
        expect(failure.cause?.name).toBe('InternalServerError');
      } finally {
        await kms.clear();
      }
      const from = kms.requests.length;
      await expect(signer.subjectOf({ kind: 'organization', id: 'org-a' }, 'u')).resolves.toMatch(
        /^[\w-]{43}$/,
      );
      expect(kmsCalls(from)).toEqual(['Decrypt']);
      db.destroy();
    }, 30_000);

    it(`signs ${LOGOUTS} logout tokens on one warm delivery worker with at most one KMS request in total`, async () => {
      const worker = await loadHandler<QueueHandler>(() => import('#functions/webhook-delivery'), {
        ...env(),
        WEBHOOKS_TABLE: LOCAL_TABLE_NAMES.webhooks,
        BOARDS_TABLE: LOCAL_TABLE_NAMES.boards,
        SESSIONS_TABLE: LOCAL_TABLE_NAMES.sessions,
        WEBHOOK_DELIVERY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries',
        PUBLIC_BASE_URL: ISSUER,
      });
      const from = kms.requests.length;
      // Ten messages an invocation, as the queue hands them over.
      for (let batch = 0; batch < LOGOUTS / 10; batch++) {
        const Records = Array.from({ length: 10 }, (_, i) => {
          const n = batch * 10 + i;
          const logout = {
            eventId: `evt_${String(n).padStart(32, '0')}`,
            sessionId: `7a7a7a7a-0000-4000-8000-${String(n).padStart(12, '0')}`,
            boardId: 'board-app',
            userId: `customer-${n}`,
            tenant: { kind: 'organization', id: 'org-a' },
            attempt: 0,
          };
          return { messageId: `m${n}`, body: JSON.stringify({ logout }) };
        });
        expect(await worker({ Records })).toEqual({ batchItemFailures: [] });
      }
      expect(kmsCalls(from)).toEqual(['Decrypt']);
      const requests = await receiver.waitFor(LOGOUTS, '/backchannel-logout');
      const jwks = createLocalJWKSet(await servedJwks());
      const last = String(new URLSearchParams(requests.at(-1)?.body).get('logout_token'));
      const { payload } = await jwtVerify(last, jwks, {
        issuer: ISSUER,
        typ: 'logout+jwt',
        algorithms: ['ES256'],
      });
      expect(payload.events).toEqual({ 'http://schemas.openid.net/event/backchannel-logout': {} });
    }, 120_000);
  },
);
