import { type DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Board } from '#lib/domain/board';
import type { BoardRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';

/** Boards in DynamoDB, keyed by `boardId`. */
export class DynamoBoardRepository implements BoardRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(boardId: string): Promise<Board | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { boardId } })),
    );
    return Item ? toBoard(Item) : undefined;
  }

  async put(board: Board): Promise<void> {
    await dynamoCall(() => this.db.send(new PutCommand({ TableName: this.tableName, Item: board })));
  }

  async list(): Promise<Board[]> {
    const boards: Board[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await dynamoCall(() =>
        this.db.send(new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: start })),
      );
      boards.push(...(page.Items ?? []).map(toBoard));
      start = page.LastEvaluatedKey;
    } while (start);
    return boards.sort((a, b) => a.boardId.localeCompare(b.boardId));
  }
}

function toBoard(item: Record<string, unknown>): Board {
  return {
    boardId: String(item.boardId),
    orgId: String(item.orgId ?? ''),
    visibility: typeof item.visibility === 'string' ? item.visibility : '',
    name: typeof item.name === 'string' ? item.name : null,
  };
}
