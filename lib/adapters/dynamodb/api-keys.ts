import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { API_KEY_ID_INDEX } from '#lib/definitions/tables';
import { type ApiKeyRecord, isRateLimitValue, type RateLimit } from '#lib/domain/api-key';
import type { ApiKeyRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable, type Item, optionalStringOf } from './table';

/** API keys in DynamoDB, keyed by the SHA-256 of the key; the key itself is never stored. */
export class DynamoApiKeyRepository extends DynamoTable implements ApiKeyRepository {
  async getByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await dynamoCall(() =>
      // Strongly consistent: a key revoked a moment ago must already be refused.
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { keyHash }, ConsistentRead: true })),
    );
    return Item ? toApiKeyRecord(Item) : undefined;
  }

  /** The key with this id, from the keyId index (eventually consistent: updates re-check their condition). */
  private async findById(keyId: string): Promise<ApiKeyRecord | undefined> {
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
    const first = Items?.[0];
    return first ? toApiKeyRecord(first) : undefined;
  }

  /**
   * Stores a new key, conditioned on no key with its hash. A refusal is read back: the item this very
   * write stored (its answer lost, the SDK retrying) holds this record's id, owner and creation time, and
   * is the success it was; anything else under the hash is refused as before.
   */
  async create(record: ApiKeyRecord): Promise<void> {
    const put = new PutCommand({
      TableName: this.tableName,
      Item: toItem(record),
      ConditionExpression: 'attribute_not_exists(keyHash)',
    });
    try {
      await dynamoCall(() => this.db.send(put));
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      const stored = await this.getByHash(record.keyHash);
      const own =
        stored !== undefined &&
        stored.keyId === record.keyId &&
        stored.userId === record.userId &&
        stored.createdAt === record.createdAt;
      if (!own) throw error;
    }
  }

  async revoke(keyId: string, revokedAt: string, revokedBy?: string): Promise<ApiKeyRecord | undefined> {
    const found = await this.findById(keyId);
    if (!found || found.status === 'REVOKED') return found;
    return this.updateExisting(found, {
      UpdateExpression: `SET #s = :revoked, revokedAt = :at${revokedBy !== undefined ? ', revokedBy = :by' : ''}`,
      // The index is eventually consistent: a revocation it has not seen yet must keep its time.
      ConditionExpression: 'attribute_exists(keyHash) AND #s <> :revoked',
      ExpressionAttributeValues: {
        ':revoked': 'REVOKED',
        ':at': revokedAt,
        ...(revokedBy !== undefined ? { ':by': revokedBy } : {}),
      },
    });
  }

  async recordUse(keyHash: string, at: string, staleBefore: string): Promise<void> {
    // Refused when another request recorded a use meanwhile (or the key is gone): nothing to write then.
    await conditionalWrite(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { keyHash },
        UpdateExpression: 'SET lastUsedAt = :at',
        ConditionExpression:
          'attribute_exists(keyHash) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :stale)',
        ExpressionAttributeValues: { ':at': at, ':stale': staleBefore },
      }),
    );
  }

  async recordUsagePlan(keyHash: string, at: string): Promise<void> {
    // Refused when another request recorded it first (or the key is gone): nothing to write then.
    await conditionalWrite(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { keyHash },
        UpdateExpression: 'SET usagePlanAt = :at',
        ConditionExpression: 'attribute_exists(keyHash) AND attribute_not_exists(usagePlanAt)',
        ExpressionAttributeValues: { ':at': at },
      }),
    );
  }

  async setLimits(keyId: string, limits: RateLimit | null): Promise<ApiKeyRecord | undefined> {
    const found = await this.findById(keyId);
    if (!found || found.status === 'REVOKED') return found;
    return this.updateExisting(found, {
      ...(limits
        ? {
            UpdateExpression: 'SET rateLimit = :rate, burstLimit = :burst',
            ExpressionAttributeValues: { ':active': 'ACTIVE', ':rate': limits.rate, ':burst': limits.burst },
          }
        : {
            UpdateExpression: 'REMOVE rateLimit, burstLimit',
            ExpressionAttributeValues: { ':active': 'ACTIVE' },
          }),
      // A revoked key keeps the limits it had: the index may not have seen the revocation yet.
      ConditionExpression: 'attribute_exists(keyHash) AND #s = :active',
    });
  }

  /**
   * One conditional update of a key found through the key-id index (`#s` names its status); when the
   * condition fails (revoked meanwhile, or deleted) the key is reported as it now is.
   */
  private async updateExisting(
    found: ApiKeyRecord,
    update: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<ApiKeyRecord | undefined> {
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { keyHash: found.keyHash },
            ...update,
            ExpressionAttributeNames: { '#s': 'status' },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return Attributes ? toApiKeyRecord(Attributes) : undefined;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      return this.getByHash(found.keyHash);
    }
  }

  async list(userId?: string): Promise<ApiKeyRecord[]> {
    const items = await this.scanAll(
      userId ? { FilterExpression: 'userId = :u', ExpressionAttributeValues: { ':u': userId } } : {},
    );
    return items.map(toApiKeyRecord).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}

/**
 * A stored key. Any status but ACTIVE reads as REVOKED, so an unexpected value never lets a key in. Its own
 * limits are `rateLimit` and `burstLimit`, both valid or not at all: anything else means the defaults, so a
 * bad value written by hand can neither lock the key out nor lift its limits.
 */
function toApiKeyRecord(item: Item): ApiKeyRecord {
  const { rateLimit: rate, burstLimit: burst } = item;
  return {
    keyHash: String(item.keyHash),
    keyId: String(item.keyId),
    userId: String(item.userId),
    name: optionalStringOf(item, 'name'),
    status: item.status === 'ACTIVE' ? 'ACTIVE' : 'REVOKED',
    createdAt: String(item.createdAt),
    revokedAt: optionalStringOf(item, 'revokedAt'),
    limits: isRateLimitValue('rate', rate) && isRateLimitValue('burst', burst) ? { rate, burst } : null,
    ...optionalStrings(item, ['expiresAt', 'lastUsedAt', 'usagePlanAt', 'createdBy', 'revokedBy'] as const),
  };
}

/** The named attributes that hold a string, as they are; the others left out. */
function optionalStrings<const K extends string>(
  item: Item,
  names: readonly K[],
): Partial<Record<K, string>> {
  const found: Partial<Record<K, string>> = {};
  for (const name of names) {
    const value = item[name];
    if (typeof value === 'string') found[name] = value;
  }
  return found;
}

/** The item of a record: its own limits as `rateLimit` and `burstLimit`, absent when it has none. */
function toItem({ limits, ...record }: ApiKeyRecord): Item {
  return limits ? { ...record, rateLimit: limits.rate, burstLimit: limits.burst } : record;
}
