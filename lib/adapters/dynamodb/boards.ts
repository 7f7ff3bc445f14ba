import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Board } from '#lib/domain/board';
import type { BoardRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable, type Item, optionalStringOf } from './table';

/** Boards in DynamoDB, keyed by `boardId`. */
export class DynamoBoardRepository extends DynamoTable implements BoardRepository {
  async get(boardId: string): Promise<Board | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { boardId } })),
    );
    return Item ? toBoard(Item) : undefined;
  }

  async put(board: Board): Promise<boolean> {
    return conditionalWrite(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: toItem(board),
        // Sessions record their board's organization, so a board never moves to another one.
        ConditionExpression: 'attribute_not_exists(boardId) OR orgId = :org',
        ExpressionAttributeValues: { ':org': board.orgId },
      }),
    );
  }

  async list(): Promise<Board[]> {
    return (await this.scanAll()).map(toBoard).sort((a, b) => a.boardId.localeCompare(b.boardId));
  }

  async listOfOrg(orgId: string): Promise<Board[]> {
    // No index by organization: operators list rarely, and a scan costs nothing on the request paths.
    const items = await this.scanAll({
      FilterExpression: 'orgId = :org',
      ExpressionAttributeValues: { ':org': orgId },
    });
    return items.map(toBoard).sort((a, b) => a.boardId.localeCompare(b.boardId));
  }

  async delete(boardId: string, orgId: string): Promise<boolean> {
    return conditionalWrite(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: { boardId },
        ConditionExpression: 'orgId = :org',
        ExpressionAttributeValues: { ':org': orgId },
      }),
    );
  }
}

/** The item of a board: its embed origins only when it has a list of its own, its app URL only when set. */
function toItem(board: Board): Item {
  const { embedOrigins, appUrl, logoutUrl, ...rest } = board;
  return {
    ...rest,
    ...(embedOrigins?.length ? { embedOrigins: [...embedOrigins] } : {}),
    ...(appUrl ? { appUrl } : {}),
    ...(logoutUrl ? { logoutUrl } : {}),
  };
}

/**
 * A stored board; a missing organization or visibility reads as empty (private, owned by nobody). Embed
 * origins are read only as a non-empty list of strings; anything else means the board has no list.
 */
function toBoard(item: Item): Board {
  const origins = item.embedOrigins;
  const embedOrigins =
    Array.isArray(origins) && origins.length > 0 && origins.every((origin) => typeof origin === 'string')
      ? (origins as string[])
      : undefined;
  const appUrl = optionalStringOf(item, 'appUrl');
  const logoutUrl = optionalStringOf(item, 'logoutUrl');
  const updatedBy = optionalStringOf(item, 'updatedBy');
  const updatedAt = optionalStringOf(item, 'updatedAt');
  return {
    boardId: String(item.boardId),
    orgId: String(item.orgId ?? ''),
    visibility: optionalStringOf(item, 'visibility') ?? '',
    name: optionalStringOf(item, 'name'),
    ...(embedOrigins ? { embedOrigins } : {}),
    ...(appUrl ? { appUrl } : {}),
    ...(logoutUrl ? { logoutUrl } : {}),
    ...(updatedBy ? { updatedBy } : {}),
    ...(updatedAt ? { updatedAt } : {}),
  };
}
