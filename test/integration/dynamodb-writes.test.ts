import { BatchWriteCommand, DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { RoutedEvent } from '#lib/domain/events';
import { createLogger } from '#lib/platform/logger';
import { type EmbeddedDynamo, ensureTables, startEmbeddedDynamo } from '#local/dynamodb';
import type { WrittenItems } from '#local/dynamodb-writes';
import { type LocalEvents, startLocalEvents } from '#local/events';
import { storedSession } from '#test/support/fixtures';

/**
 * The embedded DynamoDB notes which items of the sessions table are written, so the local change feed
 * reads only those on each poll instead of scanning the whole table.
 */
const TABLE = LOCAL_TABLE_NAMES.sessions;
let dynamo: EmbeddedDynamo;
let db: ReturnType<typeof createDocumentClient>;
let written: WrittenItems;

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo({ port: 0, host: '127.0.0.1' });
  written = dynamo.watchWrites(TABLE, 'id');
  await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
  db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
});
afterAll(async () => {
  db?.destroy();
  await dynamo?.close();
});

describe('the embedded DynamoDB’s notes of written items', () => {
  it('name every item of the watched table that each kind of write names, and none of another table', async () => {
    written.take();
    await db.send(new PutCommand({ TableName: TABLE, Item: { id: 'put' } }));
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { id: 'updated' },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': 1 },
      }),
    );
    await db.send(new DeleteCommand({ TableName: TABLE, Key: { id: 'deleted' } }));
    await db.send(
      new BatchWriteCommand({
        RequestItems: {
          [TABLE]: [
            { PutRequest: { Item: { id: 'batch-put' } } },
            { DeleteRequest: { Key: { id: 'batch-deleted' } } },
          ],
          [LOCAL_TABLE_NAMES.boards]: [{ PutRequest: { Item: { boardId: 'board-elsewhere' } } }],
        },
      }),
    );
    await db.send(
      new PutCommand({ TableName: LOCAL_TABLE_NAMES.boards, Item: { boardId: 'board-elsewhere' } }),
    );
    // A write its condition refuses is noted too: read again, the item is found unchanged.
    await expect(
      db.send(
        new PutCommand({
          TableName: TABLE,
          Item: { id: 'put' },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    ).rejects.toThrow();

    expect([...written.take()].sort()).toEqual(
      ['batch-deleted', 'batch-put', 'deleted', 'put', 'updated'].sort(),
    );
    expect(written.take().size).toBe(0);
  });
});

describe('the local change feed on the embedded DynamoDB', () => {
  let feed: LocalEvents;
  const published: RoutedEvent[] = [];
  const sent: string[] = [];
  // What the tests make fail once: the feed's next read of the items written, the sink's next publish.
  const failNext = { read: false, publish: false };
  let now = new Date();
  const sessions = () => new DynamoSessionRepository(db, TABLE);
  const heard = (sessionId: string) =>
    published.filter((routed) => routed.sessionId === sessionId).map((routed) => routed.event.type);

  beforeAll(async () => {
    const client = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
    client.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(String(context.commandName));
        if (context.commandName === 'BatchGetItemCommand' && failNext.read) {
          failNext.read = false;
          throw Object.assign(new Error('read failed'), { name: 'InternalServerError' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'countCommandsAndFail' },
    );
    feed = await startLocalEvents({
      client,
      tables: LOCAL_TABLE_NAMES,
      sinks: [
        {
          publish: async (events) => {
            if (failNext.publish) {
              failNext.publish = false;
              throw new Error('sink down');
            }
            published.push(...events);
          },
        },
      ],
      written,
      logger: createLogger({}, { sink: () => undefined }),
      now: () => now,
      // Polled by the tests alone.
      pollMs: 3_600_000,
      sweepMs: 3_600_000,
    });
  });
  afterAll(async () => {
    await feed?.stop();
  });

  it('reads nothing on a poll after no write, and never scans the table again', async () => {
    await feed.poll();
    sent.length = 0;
    await feed.poll();
    expect(sent).toEqual([]);
  });

  it('reads the items written since its last poll, and hands on their changes', async () => {
    const sessions = new DynamoSessionRepository(db, TABLE);
    const session = storedSession({
      id: '00000000-0000-4000-8000-0000000feed1',
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    await sessions.create(session);
    sent.length = 0;
    await feed.poll();
    expect(sent).toContain('BatchGetItemCommand');
    expect(sent).not.toContain('ScanCommand');
    expect(published.map((routed) => [routed.event.type, routed.sessionId])).toContainEqual([
      'session.created',
      session.id,
    ]);
  });
  it('reads an item again on the next poll when its read failed', async () => {
    const session = storedSession({
      id: '00000000-0000-4000-8000-0000000feed2',
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    await sessions().create(session);
    failNext.read = true;
    await feed.poll().catch(() => undefined);
    expect(heard(session.id)).toEqual([]);
    await feed.poll();
    expect(heard(session.id)).toEqual(['session.created']);
  });

  it('offers a change again on the next poll when handing it on failed', async () => {
    const session = storedSession({
      id: '00000000-0000-4000-8000-0000000feed3',
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    await sessions().create(session);
    failNext.publish = true;
    await feed.poll();
    expect(heard(session.id)).toEqual([]);
    await feed.poll();
    expect(heard(session.id)).toEqual(['session.created']);
  });

  it('hands on the removal of an item written since, as the expiry of a session that had expired', async () => {
    const session = storedSession({
      id: '00000000-0000-4000-8000-0000000feed4',
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    await sessions().create(session);
    await feed.poll();
    now = new Date('2099-01-01T00:05:00.000Z');
    await db.send(new DeleteCommand({ TableName: TABLE, Key: { id: session.id } }));
    await feed.poll();
    expect(heard(session.id)).toEqual(['session.created', 'session.expired']);
  });
});
