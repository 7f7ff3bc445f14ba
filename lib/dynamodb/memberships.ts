import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { MembershipRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { DynamoTable } from './table';

/** Organization memberships in DynamoDB, keyed by `orgId` + `userId`. */
export class DynamoMembershipRepository extends DynamoTable implements MembershipRepository {
  async isMember(orgId: string, userId: string): Promise<boolean> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({ TableName: this.tableName, Key: { orgId, userId }, ProjectionExpression: 'orgId' }),
      ),
    );
    return Item !== undefined;
  }

  async add(orgId: string, userId: string, addedAt: string): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({ TableName: this.tableName, Item: { orgId, userId, createdAt: addedAt } }),
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
