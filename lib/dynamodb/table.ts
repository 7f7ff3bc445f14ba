import { type DynamoDBDocumentClient, ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamoCall } from './errors';

/** A DynamoDB item as the document client returns it. */
export type Item = Record<string, unknown>;

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
}

/** An optional string attribute: `null` when absent or not a string. */
export function optionalStringOf(item: Item, name: string): string | null {
  const value = item[name];
  return typeof value === 'string' ? value : null;
}
