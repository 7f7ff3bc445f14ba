import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { MembershipRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';

/** Organization memberships in DynamoDB, keyed by `orgId` + `userId`. */
export class DynamoMembershipRepository implements MembershipRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async isMember(orgId: string, userId: string): Promise<boolean> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({ TableName: this.tableName, Key: { orgId, userId }, ProjectionExpression: 'orgId' }),
      ),
    );
    return Item !== undefined;
  }

  async add(orgId: string, userId: string): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { orgId, userId, createdAt: new Date().toISOString() },
        }),
      ),
    );
  }

  async remove(orgId: string, userId: string): Promise<boolean> {
    const { Attributes } = await dynamoCall(() =>
      this.db.send(
        new DeleteCommand({ TableName: this.tableName, Key: { orgId, userId }, ReturnValues: 'ALL_OLD' }),
      ),
    );
    return Attributes !== undefined;
  }
}
