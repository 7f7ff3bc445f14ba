import {
  BatchGetCommand,
  type DeleteCommand,
  type DynamoDBDocumentClient,
  type PutCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
  type UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { StorageUnavailableError } from '#lib/domain/errors';
import { dynamoCall } from './errors';

/** BatchGetItem reads at most 100 keys per call. */
const BATCH_GET_LIMIT = 100;
/** Rounds of re-asking for keys DynamoDB left unprocessed (it does so when throttled) before giving up. */
const UNPROCESSED_ROUNDS = 4;

/** A DynamoDB item as the document client returns it. */
export type Item = Record<string, unknown>;

/** A table as the functions of one adapter's concerns read and write it. */
export interface TableAccess {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** What every adapter receives: the document client and the name of its table. */
export abstract class DynamoTable {
  constructor(
    protected readonly db: DynamoDBDocumentClient,
    protected readonly tableName: string,
  ) {}

  /** Every item a Scan returns, page after page. Operator listings only: no request path scans. */
  protected async scanAll(
    input: Omit<ScanCommandInput, 'TableName' | 'ExclusiveStartKey'> = {},
  ): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await dynamoCall(() =>
        this.db.send(new ScanCommand({ ...input, TableName: this.tableName, ExclusiveStartKey: start })),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /**
   * The items with these keys, read strongly consistently in batches of 100; keys with no item are left
   * out. Unprocessed keys are asked for again (with a short backoff); if DynamoDB keeps refusing them the
   * read fails as unavailable rather than silently returning less.
   */
  protected async batchGetAll(keys: readonly Item[], projection?: string): Promise<Item[]> {
    const items: Item[] = [];
    for (let start = 0; start < keys.length; start += BATCH_GET_LIMIT) {
      let pending: Item[] = keys.slice(start, start + BATCH_GET_LIMIT);
      for (let round = 0; pending.length > 0; round++) {
        if (round === UNPROCESSED_ROUNDS) throw new StorageUnavailableError();
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
        const requested = pending;
        const { Responses, UnprocessedKeys } = await dynamoCall(() =>
          this.db.send(
            new BatchGetCommand({
              RequestItems: {
                [this.tableName]: {
                  Keys: requested,
                  ConsistentRead: true,
                  ...(projection !== undefined ? { ProjectionExpression: projection } : {}),
                },
              },
            }),
          ),
        );
        items.push(...(Responses?.[this.tableName] ?? []));
        pending = (UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Item[];
      }
    }
    return items;
  }
}

/** An optional string attribute: `null` when absent or not a string. */
export function optionalStringOf(item: Item, name: string): string | null {
  const value = item[name];
  return typeof value === 'string' ? value : null;
}

/** Every item a Query returns, page after page. */
export async function queryAll(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await dynamoCall(() =>
      db.send(new QueryCommand({ ...input, ...(start !== undefined ? { ExclusiveStartKey: start } : {}) })),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

/**
 * Sends a conditional write: true when written, false when its condition refused it. What a refusal
 * means (a retry meeting its own earlier write, or another's) is the caller's to decide.
 */
export async function conditionalWrite(
  db: DynamoDBDocumentClient,
  command: PutCommand | UpdateCommand | DeleteCommand,
): Promise<boolean> {
  try {
    await dynamoCall(() => db.send(command as PutCommand));
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}
