import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { SESSION_TOKEN_INDEX, TABLES } from '#lib/definitions/tables';
import type { SessionRepository } from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { dynamoCall } from './errors';

const TTL_ATTRIBUTE = TABLES.sessions.timeToLiveAttribute;

/**
 * Sessions in DynamoDB, keyed by `id`, found by token through the token-hash GSI.
 *
 * `metadata` is stored as its JSON text rather than as a native map: the SDK's marshaller silently drops a
 * `__proto__` key and throws on a `constructor` key holding an object, and the customer's data must come
 * back exactly as it was sent. JSON.parse on the way out defines such keys as plain own properties.
 */
export class DynamoSessionRepository implements SessionRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(session: StoredSession): Promise<void> {
    const ttl = Math.ceil(Date.parse(session.expiresAt) / 1000);
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...session, metadata: JSON.stringify(session.metadata), [TTL_ATTRIBUTE]: ttl },
          // A single conditional put: the session is written whole or not at all, never over another.
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    );
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
    if (!item) return undefined;
    const { [TTL_ATTRIBUTE]: _ttl, metadata, ...session } = item;
    return {
      ...session,
      metadata: typeof metadata === 'string' ? JSON.parse(metadata) : {},
    } as StoredSession;
  }
}
