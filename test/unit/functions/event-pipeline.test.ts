/**
 * The event pipeline's handlers as Lambda runs them: DynamoDB, the bus and the queue through
 * aws-sdk-client-mock. No real AWS.
 */
import { createHash } from 'node:crypto';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { toItem } from '#lib/adapters/dynamodb/session-items';
import type { BatchResponse } from '#lib/adapters/dynamodb/stream-records';
import { type StreamRecord, toAttributeMap } from '#lib/adapters/dynamodb/stream-records';
import { storedSession } from '#test/support/fixtures';
import { loadHandler } from '#test/support/harness';

/** Every call to the bus and the queue, in order. */
const sent = {
  calls: [] as Array<{ service: 'EventBridge' | 'SQS'; operation: string; input: Record<string, unknown> }>,
  failBus: false,
};
const bus = mockClient(EventBridgeClient);
const queue = mockClient(SQSClient);
function answerAwsCalls() {
  bus.on(PutEventsCommand).callsFake((input: { Entries?: unknown[] }) => {
    sent.calls.push({ service: 'EventBridge', operation: 'PutEvents', input });
    const entries = input.Entries ?? [];
    return sent.failBus
      ? { FailedEntryCount: entries.length, Entries: entries.map(() => ({ ErrorCode: 'InternalFailure' })) }
      : { FailedEntryCount: 0, Entries: entries.map((_, i) => ({ EventId: `e${i}` })) };
  });
  queue
    .on(SendMessageCommand)
    .callsFake((input: Record<string, unknown>) => {
      sent.calls.push({ service: 'SQS', operation: 'SendMessage', input });
      return { MessageId: 'm1' };
    })
    .on(SendMessageBatchCommand)
    .callsFake((input: { Entries?: Array<{ Id?: string }> }) => {
      sent.calls.push({ service: 'SQS', operation: 'SendMessageBatch', input });
      return { Successful: (input.Entries ?? []).map((entry) => ({ Id: entry.Id })), Failed: [] };
    });
}

const ddb = mockClient(DynamoDBDocumentClient);
const ENV = {
  EVENTS_TABLE: 'test-events',
  WEBHOOKS_TABLE: 'test-webhooks',
  SESSIONS_TABLE: 'test-sessions',
  BOARDS_TABLE: 'test-boards',
  EVENT_BUS_NAME: 'embed-bus',
  WEBHOOK_DELIVERY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries',
};
const ENDPOINT_ITEM = {
  ownerUserId: 'owner-a',
  id: 'whe_00000000000000000000000000000001',
  url: 'https://hooks.example.com/in',
  events: ['session.created'],
  description: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdByKeyId: 'key-1',
};

/** What webhook delivery reads besides its tables and queue: the logout tokens' issuer and keys. */
const DELIVERY_ENV = {
  WEBHOOKS_TABLE: ENV.WEBHOOKS_TABLE,
  BOARDS_TABLE: ENV.BOARDS_TABLE,
  SESSIONS_TABLE: ENV.SESSIONS_TABLE,
  WEBHOOK_DELIVERY_QUEUE_URL: ENV.WEBHOOK_DELIVERY_QUEUE_URL,
  PUBLIC_BASE_URL: 'https://embed.example.com',
  ID_TOKEN_KEYRING_KEY: 'arn:aws:kms:us-east-1:123456789012:key/11111111-1111-4111-8111-111111111111',
  SIGNING_KEYS_TABLE: 'signing-keys',
};
const BOARD_ITEM = {
  boardId: 'board-public',
  orgId: 'org-a',
  visibility: 'PUBLIC',
  appUrl: 'https://board.acme.com/handoff',
  logoutUrl: 'https://board.acme.com/backchannel-logout',
};

/** The record of a session revoked by its creator: revokedAt appears on the item. */
function revokeRecord(n: number): StreamRecord {
  const session = storedSession({
    id: `6f1c2b4e-0000-4000-8000-${String(n).padStart(12, '0')}`,
    tenant: { kind: 'keyOwner', id: 'owner-1' },
  });
  const revoked = {
    ...session,
    revokedAt: '2026-01-02T00:00:00.000Z',
    revokedByUserId: session.createdByUserId,
  };
  return {
    eventID: `record-${n}`,
    eventName: 'MODIFY',
    dynamodb: {
      Keys: { id: { S: session.id } },
      OldImage: toAttributeMap(toItem(session)),
      NewImage: toAttributeMap(toItem(revoked)),
    },
  };
}

/** A board cut-off record as a revoke-all leaves it: its scope's key, and one attribute per entry. */
function cutoffRecordItem(entryIds: readonly string[]): Record<string, unknown> {
  const key = JSON.stringify(['board', 'board-public']);
  const item: Record<string, unknown> = {
    id: `cutoff#${createHash('sha256').update(key).digest('hex')}`,
    cutoffScope: key,
  };
  for (const id of entryIds) {
    item[`entry:${id}`] = { at: '2026-01-02T00:00:00.000Z', byUserId: 'owner-1', byKeyId: 'key-1' };
  }
  return item;
}

function insertRecord(n: number): StreamRecord {
  const session = storedSession({ id: `6f1c2b4e-0000-4000-8000-${String(n).padStart(12, '0')}` });
  return {
    eventID: `record-${n}`,
    eventName: 'INSERT',
    dynamodb: { Keys: { id: { S: session.id } }, NewImage: toAttributeMap(toItem(session)) },
  };
}

beforeEach(() => {
  ddb.reset();
  bus.reset();
  queue.reset();
  answerAwsCalls();
  sent.calls.length = 0;
  sent.failBus = false;
  ddb.on(PutCommand).resolves({});
  ddb.on(GetCommand).resolves({});
  ddb.on(UpdateCommand).resolves({});
  ddb.on(QueryCommand).resolves({ Items: [] });
});
afterAll(() => {
  vi.unstubAllEnvs();
  bus.restore();
  queue.restore();
});

describe('the sessions stream consumer', () => {
  type StreamHandler = (event: { Records: StreamRecord[] }) => Promise<BatchResponse>;
  const load = () => loadHandler<StreamHandler>(() => import('#functions/session-stream'), ENV);

  it('records each event, puts it on the bus, and hands it to webhook delivery in one message, reading no endpoint', async () => {
    const handler = await load();
    const record = insertRecord(1);
    const owner = storedSession().createdByUserId;
    expect(await handler({ Records: [record] })).toEqual({ batchItemFailures: [] });
    const puts = ddb.commandCalls(PutCommand).map((c) => c.args[0].input.TableName);
    expect(puts).toContain(ENV.EVENTS_TABLE);
    expect(ddb.commandCalls(QueryCommand)).toEqual([]);
    expect(sent.calls.map((c) => `${c.service}.${c.operation}`)).toEqual([
      'EventBridge.PutEvents',
      'SQS.SendMessageBatch',
    ]);
    expect(sent.calls[0]?.input.Entries).toEqual([
      expect.objectContaining({
        EventBusName: 'embed-bus',
        DetailType: 'session.created',
        Source: 'embed-sessions',
      }),
    ]);
    expect(sent.calls[1]?.input).toMatchObject({ QueueUrl: ENV.WEBHOOK_DELIVERY_QUEUE_URL });
    const entries = sent.calls[1]?.input.Entries as Array<{ MessageBody: string; DelaySeconds: number }>;
    expect(entries.map((entry) => [JSON.parse(entry.MessageBody), entry.DelaySeconds])).toEqual([
      [
        {
          webhookEvent: {
            eventId: expect.stringMatching(/^evt_/),
            ownerUserId: owner,
            type: 'session.created',
            body: expect.stringContaining('"type":"session.created"'),
          },
        },
        0,
      ],
    ]);
  });

  it('queues a back-channel logout for a revoked session whose board has a logout URL, carrying no token', async () => {
    const handler = await load();
    ddb.on(GetCommand, { TableName: ENV.BOARDS_TABLE }).resolves({ Item: BOARD_ITEM });
    expect(await handler({ Records: [revokeRecord(1)] })).toEqual({ batchItemFailures: [] });
    const gets = ddb.commandCalls(GetCommand).map((c) => c.args[0].input);
    expect(gets).toContainEqual(
      expect.objectContaining({ TableName: ENV.BOARDS_TABLE, Key: { boardId: 'board-public' } }),
    );
    const queued = sent.calls.filter((c) => c.operation === 'SendMessage');
    expect(queued).toHaveLength(1);
    expect(queued[0]?.input.QueueUrl).toBe(ENV.WEBHOOK_DELIVERY_QUEUE_URL);
    const body = JSON.parse(String(queued[0]?.input.MessageBody));
    expect(body).toEqual({
      logout: {
        eventId: expect.stringMatching(/^evt_/),
        sessionId: '6f1c2b4e-0000-4000-8000-000000000001',
        boardId: 'board-public',
        userId: 'customer-42',
        tenant: { kind: 'keyOwner', id: 'owner-1' },
        attempt: 0,
      },
    });
  });

  it('starts the logout fan-out of every cut-off entry a revoke-all wrote, on the delivery queue', async () => {
    const handler = await load();
    const before = cutoffRecordItem(['entry-first']);
    const after = cutoffRecordItem(['entry-first', 'entry-last']);
    const record: StreamRecord = {
      eventID: 'record-1',
      eventName: 'MODIFY',
      dynamodb: {
        Keys: { id: { S: String(after.id) } },
        OldImage: toAttributeMap(before),
        NewImage: toAttributeMap(after),
      },
    };
    expect(await handler({ Records: [record] })).toEqual({ batchItemFailures: [] });
    const batches = sent.calls.filter((c) => c.operation === 'SendMessageBatch');
    expect(batches).toHaveLength(1);
    expect(batches[0]?.input.QueueUrl).toBe(ENV.WEBHOOK_DELIVERY_QUEUE_URL);
    const entries = batches[0]?.input.Entries as Array<{ MessageBody: string; DelaySeconds: number }>;
    expect(entries.map((entry) => [JSON.parse(entry.MessageBody), entry.DelaySeconds])).toEqual([
      [
        {
          fanOut: {
            scope: { kind: 'board', boardId: 'board-public' },
            entryId: 'entry-last',
            at: '2026-01-02T00:00:00.000Z',
          },
        },
        0,
      ],
    ]);
  });

  it('queues no logout for a revoked session whose board has no logout URL', async () => {
    const handler = await load();
    const { logoutUrl: _, ...noLogout } = BOARD_ITEM;
    ddb.on(GetCommand, { TableName: ENV.BOARDS_TABLE }).resolves({ Item: noLogout });
    expect(await handler({ Records: [revokeRecord(1)] })).toEqual({ batchItemFailures: [] });
    // The event is put on the bus and handed to webhook delivery; no logout is queued.
    expect(sent.calls.map((c) => c.operation)).toEqual(['PutEvents', 'SendMessageBatch']);
    const messages = ((sent.calls[1]?.input.Entries ?? []) as Array<{ MessageBody: string }>).map((entry) =>
      Object.keys(JSON.parse(entry.MessageBody)),
    );
    expect(messages).toEqual([['webhookEvent']]);
  });

  it('fails the record when the board cannot be read, so the logout is not lost', async () => {
    const handler = await load();
    ddb
      .on(GetCommand, { TableName: ENV.BOARDS_TABLE })
      .rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
    expect(await handler({ Records: [revokeRecord(1)] })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'record-1' }],
    });
  });

  it('maps a failing record, and every one after it, to batchItemFailures', async () => {
    const handler = await load();
    ddb.on(PutCommand).rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
    const records = [insertRecord(1), insertRecord(2), insertRecord(3)];
    const result = await handler({ Records: records });
    expect(result.batchItemFailures).toEqual(records.map((r) => ({ itemIdentifier: r.eventID })));
  });

  it('fails the record when the bus refuses its event, so Lambda retries it', async () => {
    const handler = await load();
    sent.failBus = true;
    const records = [insertRecord(1), insertRecord(2)];
    expect(await handler({ Records: records })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'record-1' }, { itemIdentifier: 'record-2' }],
    });
  });
});

describe('the expiry sweep handler', () => {
  it('runs the sweep: reads its mark, queries the due minutes, and answers how many it published', async () => {
    const handler = await loadHandler<() => Promise<{ published: number }>>(
      () => import('#functions/expiry-sweep'),
      ENV,
    );
    expect(await handler()).toEqual({ published: 0 });
    const gets = ddb.commandCalls(GetCommand).map((c) => c.args[0].input.TableName);
    expect(gets).toContain(ENV.EVENTS_TABLE);
    const queried = ddb.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(queried.length).toBeGreaterThan(0);
    for (const input of queried) {
      expect(input.TableName).toBe(ENV.EVENTS_TABLE);
      expect(String(input.ExpressionAttributeValues?.[':pk'])).toMatch(/^due#/);
    }
  });
});

describe('the webhook delivery handler', () => {
  it('reports a message it cannot read in batchItemFailures', async () => {
    const handler = await loadHandler<
      (event: { Records: Array<{ messageId: string; body: string }> }) => Promise<BatchResponse>
    >(() => import('#functions/webhook-delivery'), DELIVERY_ENV);
    expect(await handler({ Records: [{ messageId: 'm1', body: 'not json' }] })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm1' }],
    });
  });

  it('drops the delivery of a deleted endpoint without sending anything', async () => {
    const handler = await loadHandler<
      (event: { Records: Array<{ messageId: string; body: string }> }) => Promise<BatchResponse>
    >(() => import('#functions/webhook-delivery'), DELIVERY_ENV);
    const delivery = {
      eventId: 'evt_1',
      ownerUserId: 'owner-a',
      endpointId: ENDPOINT_ITEM.id,
      body: '{}',
      attempt: 0,
    };
    expect(await handler({ Records: [{ messageId: 'm1', body: JSON.stringify({ delivery }) }] })).toEqual({
      batchItemFailures: [],
    });
    expect(ddb.commandCalls(GetCommand).map((c) => c.args[0].input.TableName)).toEqual([ENV.WEBHOOKS_TABLE]);
    expect(sent.calls).toEqual([]);
  });

  it('drops a logout whose board no longer has a logout URL, reading the board and signing nothing', async () => {
    const handler = await loadHandler<
      (event: { Records: Array<{ messageId: string; body: string }> }) => Promise<BatchResponse>
    >(() => import('#functions/webhook-delivery'), DELIVERY_ENV);
    const { logoutUrl: _, ...noLogout } = BOARD_ITEM;
    ddb.on(GetCommand, { TableName: ENV.BOARDS_TABLE }).resolves({ Item: noLogout });
    const logout = { eventId: 'evt_1', sessionId: 's1', boardId: 'board-public', userId: 'u1', attempt: 0 };
    expect(await handler({ Records: [{ messageId: 'm1', body: JSON.stringify({ logout }) }] })).toEqual({
      batchItemFailures: [],
    });
    expect(ddb.commandCalls(GetCommand).map((c) => c.args[0].input.TableName)).toEqual([ENV.BOARDS_TABLE]);
    expect(sent.calls).toEqual([]);
  });

  it('expands a handed-off event: one Query of its owner’s partition, its first attempts in batches of ten', async () => {
    const handler = await loadHandler<
      (event: { Records: Array<{ messageId: string; body: string }> }) => Promise<BatchResponse>
    >(() => import('#functions/webhook-delivery'), DELIVERY_ENV);
    const items = Array.from({ length: 16 }, (_, n) => ({
      ...ENDPOINT_ITEM,
      webhookId: `whe_${String(n).padStart(32, '0')}`,
    }));
    ddb.on(QueryCommand, { TableName: ENV.WEBHOOKS_TABLE }).resolves({ Items: items });
    const webhookEvent = { eventId: 'evt_1', ownerUserId: 'owner-a', type: 'session.created', body: '{}' };
    expect(await handler({ Records: [{ messageId: 'm1', body: JSON.stringify({ webhookEvent }) }] })).toEqual(
      {
        batchItemFailures: [],
      },
    );
    const queried = ddb.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(queried).toHaveLength(1);
    expect(queried[0]).toMatchObject({
      TableName: ENV.WEBHOOKS_TABLE,
      ExpressionAttributeValues: expect.objectContaining({ ':owner': 'owner-a' }),
    });
    const batches = sent.calls.filter((c) => c.operation === 'SendMessageBatch');
    expect(batches.map((c) => (c.input.Entries as unknown[]).length)).toEqual([10, 6]);
    const deliveries = batches.flatMap((c) =>
      (c.input.Entries as Array<{ MessageBody: string }>).map((e) => JSON.parse(e.MessageBody).delivery),
    );
    expect(new Set(deliveries.map((d) => d.endpointId)).size).toBe(16);
    expect(deliveries.every((d) => d.eventId === 'evt_1' && d.attempt === 0)).toBe(true);
  });

  it('runs a fan-out’s start: reads its cut-off record consistently, and queues a step for each of the 16 parts', async () => {
    const handler = await loadHandler<
      (event: { Records: Array<{ messageId: string; body: string }> }) => Promise<BatchResponse>
    >(() => import('#functions/webhook-delivery'), DELIVERY_ENV);
    ddb
      .on(BatchGetCommand)
      .resolves({ Responses: { [ENV.SESSIONS_TABLE]: [cutoffRecordItem(['entry-1'])] } });
    const fanOut = { scope: { kind: 'board', boardId: 'board-public' }, entryId: 'entry-1' };
    expect(await handler({ Records: [{ messageId: 'm1', body: JSON.stringify({ fanOut }) }] })).toEqual({
      batchItemFailures: [],
    });
    const read = ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.[ENV.SESSIONS_TABLE];
    expect(read?.ConsistentRead).toBe(true);
    const batches = sent.calls.filter((c) => c.operation === 'SendMessageBatch');
    expect(batches.map((c) => (c.input.Entries as unknown[]).length)).toEqual([10, 6]);
    const parts = batches.flatMap((c) =>
      (c.input.Entries as Array<{ MessageBody: string }>).map((e) => JSON.parse(e.MessageBody).fanOut.part),
    );
    expect(parts).toEqual(Array.from({ length: 16 }, (_, part) => part));
  });

  it('refuses to start without the logout tokens’ issuer or keys', async () => {
    for (const missing of ['PUBLIC_BASE_URL', 'ID_TOKEN_KEYRING_KEY'] as const) {
      const { [missing]: _, ...env } = DELIVERY_ENV;
      vi.unstubAllEnvs();
      await expect(loadHandler(() => import('#functions/webhook-delivery'), env)).rejects.toThrow(
        missing === 'PUBLIC_BASE_URL' ? /PUBLIC_BASE_URL is required/ : /ID_TOKEN_KEYRING_KEY/,
      );
    }
  });
});
