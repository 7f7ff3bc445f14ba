import { type DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '#lib/dynamodb/client';

/** Where a test reads what was really stored: a client of its own, or the endpoint of a DynamoDB. */
export type StoreReader = DynamoDBDocumentClient | string;

async function withReader<T>(
  from: StoreReader,
  read: (db: DynamoDBDocumentClient) => Promise<T>,
): Promise<T> {
  if (typeof from !== 'string') return read(from);
  const db = createDocumentClient({ endpoint: from, region: 'local' });
  try {
    return await read(db);
  } finally {
    db.destroy();
  }
}

/**
 * Every item of `table` that `filter` keeps (every item without one), by a strongly consistent Scan:
 * what the test's writes left, not what an index shows yet.
 */
export function scanItems(
  from: StoreReader,
  table: string,
  filter?: string,
  values?: Record<string, unknown>,
): Promise<Record<string, unknown>[]> {
  return withReader(from, async (db) => {
    const { Items = [] } = await db.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: filter,
        ExpressionAttributeValues: values,
        ConsistentRead: true,
      }),
    );
    return Items;
  });
}

/**
 * The items of `table` (of its `index` when given) under `keyCondition`: strongly consistent on the
 * table itself; an index answers only eventually consistent reads.
 */
export function queryItems(
  from: StoreReader,
  table: string,
  keyCondition: string,
  values: Record<string, unknown>,
  index?: string,
): Promise<Record<string, unknown>[]> {
  return withReader(from, async (db) => {
    const { Items = [] } = await db.send(
      new QueryCommand({
        TableName: table,
        IndexName: index,
        KeyConditionExpression: keyCondition,
        ExpressionAttributeValues: values,
        ConsistentRead: index === undefined,
      }),
    );
    return Items;
  });
}
