import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { SESSION_TOKEN_INDEX, TABLES } from '#lib/definitions/tables';
import type { SessionRepository } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { dynamoCall } from './errors';
import { DynamoTable, type Item, optionalStringOf } from './table';

const TTL_ATTRIBUTE = TABLES.sessions.timeToLiveAttribute;

/**
 * Sessions in DynamoDB, keyed by `id`, found by token through the token-hash GSI.
 *
 * `metadata` is stored as its JSON text rather than as a native map: the SDK's marshaller silently drops a
 * `__proto__` key and throws on a `constructor` key holding an object, and the customer's data must come
 * back exactly as it was sent. JSON.parse on the way out defines such keys as plain own properties.
 */
export class DynamoSessionRepository extends DynamoTable implements SessionRepository {
  async create(session: StoredSession): Promise<void> {
    try {
      await dynamoCall(() =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: toItem(session),
            // A single conditional put: the session is written whole or not at all, never over another.
            ConditionExpression: 'attribute_not_exists(id)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      // When a put's answer is lost after the write landed, the SDK retries it and the retry meets the
      // session it has just written: that is a success. Only another session under this id is a refusal.
      if (!(await this.holds(session, error as { Item?: Item }))) throw error;
    }
  }

  /** True when the item a conditional put was refused over is `session` itself (same token hash). */
  private async holds(session: StoredSession, refusal: { Item?: Item }): Promise<boolean> {
    if (refusal.Item) return attributeString(refusal.Item.tokenHash) === session.tokenHash;
    // Engines that ignore ReturnValuesOnConditionCheckFailure (dynalite): read the session as it is now.
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { id: session.id },
          ConsistentRead: true,
          ProjectionExpression: 'tokenHash',
        }),
      ),
    );
    return Item !== undefined && Item.tokenHash === session.tokenHash;
  }

  async findByTokenHash(tokenHash: string): Promise<StoredSession | undefined> {
    const { Items } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: SESSION_TOKEN_INDEX,
          KeyConditionExpression: 'tokenHash = :h',
          ExpressionAttributeValues: { ':h': tokenHash },
          Limit: 1,
        }),
      ),
    );
    const item = Items?.[0];
    return item ? toStoredSession(item) : undefined;
  }
}

/**
 * A string attribute of the item a refusal carries, which the document client leaves in DynamoDB's
 * attribute-value form (`{ S: "…" }`); a plain string is taken too.
 */
function attributeString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const s = (value as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' ? s : undefined;
}

/** The item for a session: metadata as JSON text, and the TTL attribute in epoch seconds from expiresAt. */
function toItem(session: StoredSession): Item {
  const ttl = Math.ceil(Date.parse(session.expiresAt) / 1000);
  return { ...session, metadata: JSON.stringify(session.metadata), [TTL_ATTRIBUTE]: ttl };
}

/** A stored session without the TTL attribute, its metadata parsed back into an object. */
function toStoredSession(item: Item): StoredSession {
  return {
    id: String(item.id),
    boardId: String(item.boardId),
    tokenHash: String(item.tokenHash),
    userId: String(item.userId),
    email: String(item.email),
    firstName: optionalStringOf(item, 'firstName'),
    lastName: optionalStringOf(item, 'lastName'),
    avatarUrl: optionalStringOf(item, 'avatarUrl'),
    plan: optionalStringOf(item, 'plan'),
    metadata: typeof item.metadata === 'string' ? JSON.parse(item.metadata) : {},
    createdAt: String(item.createdAt),
    expiresAt: String(item.expiresAt),
  };
}
