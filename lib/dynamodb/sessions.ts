import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SessionRepository, StoredSession } from '../domain/types';
import { SESSION_TOKEN_INDEX, TABLES } from '../tables';
import { dynamoCall } from './errors';

const TTL_ATTRIBUTE = TABLES.sessions.timeToLiveAttribute;

/** Sessions in DynamoDB, keyed by `id`, found by token through the token-hash GSI. */
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
          Item: { ...session, [TTL_ATTRIBUTE]: ttl },
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
    const { [TTL_ATTRIBUTE]: _ttl, ...session } = item;
    return session as StoredSession;
  }
}
