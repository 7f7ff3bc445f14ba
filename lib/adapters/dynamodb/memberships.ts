import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { MEMBERSHIP_USER_INDEX } from '#lib/definitions/tables';
import type { MembershipRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { DynamoTable, queryAll } from './table';

/** Organization memberships in DynamoDB, keyed by `orgId` + `userId`. */
export class DynamoMembershipRepository extends DynamoTable implements MembershipRepository {
  async isMember(orgId: string, userId: string): Promise<boolean> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { orgId, userId },
          ProjectionExpression: 'orgId',
          // Losing membership loses access at once: never decide on a stale copy.
          ConsistentRead: true,
        }),
      ),
    );
    return Item !== undefined;
  }

  async memberSince(orgId: string, userId: string): Promise<string | null | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { orgId, userId },
          ProjectionExpression: 'orgId, createdAt',
          ConsistentRead: true,
        }),
      ),
    );
    if (!Item) return undefined;
    return typeof Item.createdAt === 'string' ? Item.createdAt : null;
  }

  async orgsOf(userId: string): Promise<string[]> {
    const candidates = (
      await queryAll(this.db, {
        TableName: this.tableName,
        IndexName: MEMBERSHIP_USER_INDEX,
        KeyConditionExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': userId },
      })
    ).map((item) => String(item.orgId));
    if (candidates.length === 0) return [];
    // The index lags the table: a membership removed a moment ago may still be listed there.
    const confirmed = await this.batchGetAll(candidates.map((orgId) => ({ orgId, userId })));
    return confirmed.map((item) => String(item.orgId)).sort();
  }

  async membersOf(orgId: string): Promise<string[]> {
    const members = await queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'orgId = :o',
      ExpressionAttributeValues: { ':o': orgId },
      ProjectionExpression: 'userId',
      // The members as they are now: a revoke-all's cut-off covers exactly their sessions.
      ConsistentRead: true,
    });
    return members.map((item) => String(item.userId)).sort();
  }

  async add(orgId: string, userId: string, addedAt: string, addedBy?: string): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            orgId,
            userId,
            createdAt: addedAt,
            ...(addedBy !== undefined ? { createdBy: addedBy } : {}),
          },
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
