import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { API_KEY_ID_INDEX } from '#lib/definitions/tables';
import type { ApiKeyRecord } from '#lib/domain/api-key';
import type { ApiKeyRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';

/** API keys in DynamoDB, keyed by the SHA-256 of the key; the key itself is never stored. */
export class DynamoApiKeyRepository implements ApiKeyRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async getByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await dynamoCall(() =>
      // Strongly consistent: a key revoked a moment ago must already be refused.
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { keyHash }, ConsistentRead: true })),
    );
    return Item as ApiKeyRecord | undefined;
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: record,
          ConditionExpression: 'attribute_not_exists(keyHash)',
        }),
      ),
    );
  }

  async revoke(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined> {
    const { Items } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: API_KEY_ID_INDEX,
          KeyConditionExpression: 'keyId = :k',
          ExpressionAttributeValues: { ':k': keyId },
        }),
      ),
    );
    const found = Items?.[0] as ApiKeyRecord | undefined;
    if (!found) return undefined;
    if (found.status === 'REVOKED') return found;
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { keyHash: found.keyHash },
            UpdateExpression: 'SET #s = :revoked, revokedAt = :at',
            // The index is eventually consistent: a revocation it has not seen yet must keep its time.
            ConditionExpression: 'attribute_exists(keyHash) AND #s <> :revoked',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':revoked': 'REVOKED', ':at': revokedAt },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return Attributes as ApiKeyRecord;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      // Revoked meanwhile, or deleted: report the key as it now is.
      return this.getByHash(found.keyHash);
    }
  }

  async list(userId?: string): Promise<ApiKeyRecord[]> {
    const keys: ApiKeyRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await dynamoCall(() =>
        this.db.send(
          new ScanCommand({
            TableName: this.tableName,
            ExclusiveStartKey: start,
            ...(userId
              ? { FilterExpression: 'userId = :u', ExpressionAttributeValues: { ':u': userId } }
              : {}),
          }),
        ),
      );
      keys.push(...((page.Items ?? []) as ApiKeyRecord[]));
      start = page.LastEvaluatedKey;
    } while (start);
    return keys.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}
