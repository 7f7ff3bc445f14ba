import { type DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';

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
  const command = new ScanCommand({
    ConsistentRead: true,
    TableName: table,
    FilterExpression: filter,
    ExpressionAttributeValues: values,
  });
  return withReader(from, async (db) => (await db.send(command)).Items ?? []);
}

/**
 * The items of `table` (of its `index` when given) whose key attributes equal `key`: strongly consistent
 * on the table itself; an index answers only eventually consistent reads.
 */
export function queryItems(
  from: StoreReader,
  table: string,
  key: Record<string, unknown>,
  index?: string,
): Promise<Record<string, unknown>[]> {
  const names = Object.keys(key);
  const command = new QueryCommand({
    TableName: table,
    IndexName: index,
    KeyConditionExpression: names.map((name) => `${name} = :${name}`).join(' AND '),
    ExpressionAttributeValues: Object.fromEntries(names.map((name) => [`:${name}`, key[name]])),
    ConsistentRead: index === undefined,
  });
  return withReader(from, async (db) => (await db.send(command)).Items ?? []);
}
