import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { revokeAllEventId } from '#lib/adapters/dynamodb/change-events';
import { processStreamRecords } from '#lib/adapters/dynamodb/change-feed';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { CUTOFF_COPIES } from '#lib/adapters/dynamodb/cutoff-record-items';
import { DynamoCutoffRecords } from '#lib/adapters/dynamodb/cutoff-records';
import { DynamoEventStore } from '#lib/adapters/dynamodb/events';
import { toItem } from '#lib/adapters/dynamodb/session-items';
import type { StreamRecord } from '#lib/adapters/dynamodb/stream-records';
import { type DeliveryMessage, SqsDeliveryScheduler } from '#lib/adapters/sqs/delivery-queue';
import { TABLES } from '#lib/definitions/tables';
import type { CutoffScope } from '#lib/domain/cutoffs';
import type { EventSink, RoutedEvent } from '#lib/domain/events';
import type { StoredSession } from '#lib/domain/session';
import { BackChannelLogoutSink } from '#lib/use-cases/back-channel-logout';
import { createTableInput } from '#local/dynamodb';
import { storedSession } from '#test/support/fixtures';
import { sqsClientAnswering } from '#test/support/sqs-mock';
import { startTestDynamo, testEngine } from '#test/support/test-dynamo';

/**
 * The stream processor on the records AWS's own engine produces: DynamoDB Local implements DynamoDB
 * Streams, so the sessions table is created with a NEW_AND_OLD_IMAGES stream, written as the service
 * writes it (insert, modify, a TTL-style remove), and its stream read with the SDK's Streams client. dynalite has no streams: on it (`npm test`) this file is skipped; the DynamoDB Local leg
 * (`npm run test:dynamodb-local`) runs it.
 */
const onDynamoDbLocal = testEngine() === 'dynamodb-local';
if (!onDynamoDbLocal)
  console.log('DynamoDB Streams test skipped: dynalite has no streams (the DynamoDB Local leg runs it).');

const SESSIONS = 'stream-sessions';
const EVENTS = 'stream-events';
const BOARDS = 'stream-boards';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

let dynamo: { endpoint: string; close(): Promise<void> };
let db: ReturnType<typeof createDocumentClient>;
let streamArn: string;

beforeAll(async () => {
  if (!onDynamoDbLocal) return;
  dynamo = await startTestDynamo();
  const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials });
  await client.send(new CreateTableCommand(createTableInput(TABLES.events, EVENTS)));
  await client.send(new CreateTableCommand(createTableInput(TABLES.boards, BOARDS)));
  await client.send(
    new CreateTableCommand({
      ...createTableInput(TABLES.sessions, SESSIONS),
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  streamArn = String(
    (await client.send(new DescribeTableCommand({ TableName: SESSIONS }))).Table?.LatestStreamArn,
  );
  client.destroy();
  db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'us-east-1' });
}, 90_000);
afterAll(async () => {
  db?.destroy();
  await dynamo?.close();
});

/** Every record of the stream so far, in order, read as a Lambda poller would. */
async function streamRecords(): Promise<StreamRecord[]> {
  const streams = new DynamoDBStreamsClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials });
  try {
    const described = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    const records: StreamRecord[] = [];
    for (const { ShardId } of described.StreamDescription?.Shards ?? []) {
      let iterator = (
        await streams.send(
          new GetShardIteratorCommand({ StreamArn: streamArn, ShardId, ShardIteratorType: 'TRIM_HORIZON' }),
        )
      ).ShardIterator;
      for (let rounds = 0; iterator && rounds < 20; rounds++) {
        const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
        // The SDK's records have the shape Lambda hands a function (attribute values in wire form).
        records.push(...((page.Records ?? []) as StreamRecord[]));
        if ((page.Records ?? []).length === 0) break;
        iterator = page.NextShardIterator;
      }
    }
    return records;
  } finally {
    streams.destroy();
  }
}

describe.skipIf(!onDynamoDbLocal)('the stream processor on DynamoDB Local stream records', () => {
  it('derives created, opened, revoked and a TTL-style expiry from the real records, stores each once, and queues a logout for each end', async () => {
    const open = storedSession({ id: '5e55e5e0-0000-4000-8000-000000000001', createdByUserId: 'owner-s' });
    const expiring: StoredSession = storedSession({
      id: '5e55e5e0-0000-4000-8000-000000000002',
      tokenHash: 'e'.repeat(64),
      createdByUserId: 'owner-s',
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-01-01T01:00:00.000Z',
    });
    const put = (item: Record<string, unknown>) =>
      db.send(new PutCommand({ TableName: SESSIONS, Item: item }));
    await put(toItem(open));
    await put({ ...toItem(open), openedAt: '2026-01-01T00:05:00.000Z' });
    await put({
      ...toItem({ ...open, revokedAt: '2026-01-01T00:10:00.000Z', revokedByUserId: 'admin-cli' }),
      openedAt: '2026-01-01T00:05:00.000Z',
    });
    await put(toItem(expiring));
    // What DynamoDB's TTL does to an expired item: a REMOVE with its old image.
    await db.send(new DeleteCommand({ TableName: SESSIONS, Key: { id: expiring.id } }));

    const records = await streamRecords();
    expect(records.map((r) => r.eventName)).toEqual(['INSERT', 'MODIFY', 'MODIFY', 'INSERT', 'REMOVE']);
    const published: RoutedEvent[] = [];
    const sink: EventSink = { publish: async (events) => void published.push(...events) };
    // Back-channel logout as the AWS consumer wires it: the board read from its table, the logout queued.
    await db.send(
      new PutCommand({
        TableName: BOARDS,
        Item: {
          boardId: open.boardId,
          orgId: open.orgId,
          visibility: 'PUBLIC',
          appUrl: 'https://board.acme.com/handoff',
          logoutUrl: 'https://board.acme.com/backchannel-logout',
        },
      }),
    );
    const queued: DeliveryMessage[] = [];
    const queue = new SqsDeliveryScheduler(
      sqsClientAnswering((_operation, input) => {
        queued.push(JSON.parse(String(input.MessageBody)));
        return {};
      }),
      'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries',
      { now: () => new Date('2026-06-01T00:00:00.000Z') },
    );
    const logouts = new BackChannelLogoutSink({
      boards: new DynamoBoardRepository(db, BOARDS),
      stageAppUrl: undefined,
      appUrlRule: { allowLoopbackHttp: false },
      scheduler: queue.logouts,
    });
    const deps = {
      store: new DynamoEventStore(db, EVENTS),
      sinks: [sink, logouts],
      now: () => new Date('2026-06-01T00:00:00.000Z'),
    };
    expect(await processStreamRecords(deps, records)).toEqual({ batchItemFailures: [] });
    expect(published.map((e) => `${String(e.sessionId).slice(-1)} ${e.event.type}`)).toEqual([
      '1 session.created',
      '1 session.opened',
      '1 session.revoked',
      '2 session.created',
      '2 session.expired',
    ]);
    expect(published.every((e) => e.ownerUserId === 'owner-s')).toBe(true);
    // The revoke and the TTL-style expiry each queue one logout for their board's application.
    expect(
      queued.map((m) => ('logout' in m ? `${m.logout.sessionId.slice(-1)} ${m.logout.boardId}` : m)),
    ).toEqual([`1 ${open.boardId}`, `2 ${open.boardId}`]);
    // Lambda delivering the same records again stores nothing twice.
    expect(await processStreamRecords(deps, records)).toEqual({ batchItemFailures: [] });
    for (const event of published) expect(await deps.store.get(event.event.id)).toEqual(event.event);
  });
  it('derives one sessions.revoked, and starts a logout fan-out per entry and record, from the real records of a revoke-all’s cut-off writes', async () => {
    const cutoffs = new DynamoCutoffRecords(db, SESSIONS);
    const targets: CutoffScope[] = [
      { kind: 'creatorUser', creatorUserId: 'owner-r', userId: 'customer-r' },
      { kind: 'tenantUser', tenant: { kind: 'organization', id: 'org-r' }, userId: 'customer-r' },
    ];
    const by = { id: 'call-r', byUserId: 'owner-r', byKeyId: 'key_r' };
    const first = '2026-01-02T00:00:00.000Z';
    // As the use case writes: its entry uncounted on every record, then moved to its end, counted, the
    // first record alone carrying the notice (written last).
    for (const target of targets)
      await cutoffs.writeCutoff([target], { entry: { ...by, at: first }, now: first });
    const notice = { scope: { userId: 'customer-r' }, revoked: 5, writtenAt: '2026-01-02T00:00:00.300Z' };
    const last = { ...by, at: notice.writtenAt, until: 1_800_000_000 };
    const counted = { countedThrough: first, now: notice.writtenAt };
    await cutoffs.writeCutoff(targets.slice(1), { entry: last, ...counted });
    await cutoffs.writeCutoff(targets.slice(0, 1), { entry: { ...last, notice }, ...counted });

    const records = (await streamRecords()).filter((r) =>
      JSON.stringify(r.dynamodb?.Keys).includes('cutoff#'),
    );
    // A stream orders the changes of one item, not those of two: each copy of each record is inserted,
    // then modified (only copy 0's changes derive anything).
    const byRecord = new Map<string, string[]>();
    for (const r of records) {
      const key = JSON.stringify(r.dynamodb?.Keys);
      byRecord.set(key, [...(byRecord.get(key) ?? []), String(r.eventName)]);
    }
    expect([...byRecord.values()]).toEqual(Array(2 * CUTOFF_COPIES).fill(['INSERT', 'MODIFY']));
    const published: RoutedEvent[] = [];
    const started: string[] = [];
    const deps = {
      store: new DynamoEventStore(db, EVENTS),
      sinks: [{ publish: async (events) => void published.push(...events) } satisfies EventSink],
      now: () => new Date('2026-06-01T00:00:00.000Z'),
      fanOuts: {
        start: async (jobs: ReadonlyArray<{ scope: { kind: string }; entryId: string; since?: string }>) =>
          void started.push(...jobs.map((job) => `${job.scope.kind} ${job.entryId} ${job.since ?? '-'}`)),
      },
    };
    expect(await processStreamRecords(deps, records)).toEqual({ batchItemFailures: [] });
    // The entry starts its logout fan-out on each record when it appears, and again from its first
    // instant on when the last write moves it (in the order of each record's own changes; the two
    // records' changes may come in either order).
    expect([...started].sort()).toEqual([
      'creatorUser call-r -',
      `creatorUser call-r ${first}`,
      'tenantUser call-r -',
      `tenantUser call-r ${first}`,
    ]);
    for (const kind of ['creatorUser', 'tenantUser'])
      expect(started.filter((job) => job.startsWith(kind))).toEqual([
        `${kind} call-r -`,
        `${kind} call-r ${first}`,
      ]);
    expect(published).toEqual([
      {
        ownerUserId: 'owner-r',
        sessionId: null,
        boardId: null,
        event: {
          id: revokeAllEventId('call-r'),
          type: 'sessions.revoked',
          occurredAt: notice.writtenAt,
          data: {
            scope: { userId: 'customer-r' },
            cutoff: notice.writtenAt,
            revoked: 5,
            actor: { type: 'api_key', keyId: 'key_r' },
          },
        },
      },
    ]);
    // Delivered again, the records store nothing twice: the event is the one stored.
    expect(await processStreamRecords(deps, records)).toEqual({ batchItemFailures: [] });
    expect(await deps.store.get(revokeAllEventId('call-r'))).toEqual(published[0]?.event);
  });
});
