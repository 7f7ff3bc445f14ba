/**
 * The event pipeline's handlers as Lambda runs them: DynamoDB through aws-sdk-client-mock, the bus and the
 * queue through a fake of the signed JSON caller. No real AWS.
 */
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AwsJsonService } from '#lib/aws/json-protocol';
import { toItem } from '#lib/dynamodb/sessions';
import type { BatchResponse } from '#lib/events/stream';
import { type StreamRecord, toAttributeMap } from '#lib/events/stream';
import { storedSession } from '#test/support/fixtures';
import { loadHandler } from '#test/support/harness';

const sent = vi.hoisted(() => ({
  calls: [] as Array<{ service: string; operation: string; input: Record<string, unknown> }>,
  failBus: false,
}));
vi.mock('#lib/aws/json-protocol', async (importOriginal) => {
  const original = await importOriginal<typeof import('#lib/aws/json-protocol')>();
  return {
    ...original,
    awsJsonCall: (service: AwsJsonService) => async (operation: string, input: Record<string, unknown>) => {
      sent.calls.push({ service: service.targetPrefix, operation, input });
      if (operation === 'PutEvents') {
        const entries = input.Entries as unknown[];
        return sent.failBus
          ? {
              FailedEntryCount: entries.length,
              Entries: entries.map(() => ({ ErrorCode: 'InternalFailure' })),
            }
          : { FailedEntryCount: 0, Entries: entries.map((_, i) => ({ EventId: `e${i}` })) };
      }
      return { MessageId: 'm1' };
    },
  };
});

const ddb = mockClient(DynamoDBDocumentClient);
const ENV = {
  EVENTS_TABLE: 'test-events',
  WEBHOOKS_TABLE: 'test-webhooks',
  SESSIONS_TABLE: 'test-sessions',
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
  sent.calls.length = 0;
  sent.failBus = false;
  ddb.on(PutCommand).resolves({});
  ddb.on(GetCommand).resolves({});
  ddb.on(UpdateCommand).resolves({});
  ddb.on(QueryCommand).resolves({ Items: [] });
});
afterAll(() => vi.unstubAllEnvs());

describe('the sessions stream consumer', () => {
  type StreamHandler = (event: { Records: StreamRecord[] }) => Promise<BatchResponse>;
  const load = () => loadHandler<StreamHandler>(() => import('#functions/session-stream'), ENV);

  it('records each event, puts it on the bus, and queues one delivery per subscribed endpoint', async () => {
    const handler = await load();
    const record = insertRecord(1);
    const owner = storedSession().createdByUserId;
    ddb
      .on(QueryCommand, { TableName: ENV.WEBHOOKS_TABLE })
      .resolves({ Items: [{ ...ENDPOINT_ITEM, ownerUserId: owner }] });
    expect(await handler({ Records: [record] })).toEqual({ batchItemFailures: [] });
    const puts = ddb.commandCalls(PutCommand).map((c) => c.args[0].input.TableName);
    expect(puts).toContain(ENV.EVENTS_TABLE);
    expect(sent.calls.map((c) => `${c.service}.${c.operation}`)).toEqual([
      'AWSEvents.PutEvents',
      'AmazonSQS.SendMessage',
    ]);
    expect(sent.calls[0]?.input.Entries).toEqual([
      expect.objectContaining({
        EventBusName: 'embed-bus',
        DetailType: 'session.created',
        Source: 'embed-sessions',
      }),
    ]);
    expect(sent.calls[1]?.input).toMatchObject({ QueueUrl: ENV.WEBHOOK_DELIVERY_QUEUE_URL, DelaySeconds: 0 });
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
    >(() => import('#functions/webhook-delivery'), {
      WEBHOOKS_TABLE: ENV.WEBHOOKS_TABLE,
      WEBHOOK_DELIVERY_QUEUE_URL: ENV.WEBHOOK_DELIVERY_QUEUE_URL,
    });
    expect(await handler({ Records: [{ messageId: 'm1', body: 'not json' }] })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm1' }],
    });
  });

  it('drops the delivery of a deleted endpoint without sending anything', async () => {
    const handler = await loadHandler<
      (event: { Records: Array<{ messageId: string; body: string }> }) => Promise<BatchResponse>
    >(() => import('#functions/webhook-delivery'), {
      WEBHOOKS_TABLE: ENV.WEBHOOKS_TABLE,
      WEBHOOK_DELIVERY_QUEUE_URL: ENV.WEBHOOK_DELIVERY_QUEUE_URL,
    });
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
});
