import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLES } from '#lib/definitions/tables';
import {
  IDEMPOTENCY_LOCK_SECONDS,
  IDEMPOTENCY_WINDOW_SECONDS,
  type IdempotencyRecord,
} from '#lib/domain/idempotency';
import type { IdempotencyRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { DynamoTable, type Item } from './table';

const TTL_ATTRIBUTE = TABLES.idempotency.timeToLiveAttribute;
const NAMES = { '#ttl': TTL_ATTRIBUTE, '#state': 'state' };

/**
 * Idempotency records in DynamoDB, keyed by record id. Who holds a key is decided by one conditional
 * write, never by a read followed by a write; the stored response is sealed (lib/domain/idempotency.ts).
 */
export class DynamoIdempotencyRepository extends DynamoTable implements IdempotencyRepository {
  async claim(
    id: string,
    fingerprint: string,
    now: Date,
  ): Promise<{ claimed: true } | { claimed: false; record: IdempotencyRecord }> {
    const nowMs = now.getTime();
    const nowSeconds = Math.floor(nowMs / 1000);
    // A record that went away between the failed write and the read (expired, released) is claimed again.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await dynamoCall(() =>
          this.db.send(
            new PutCommand({
              TableName: this.tableName,
              Item: {
                recordId: id,
                state: 'IN_PROGRESS',
                fingerprint,
                lockedUntilMs: nowMs + IDEMPOTENCY_LOCK_SECONDS * 1000,
                [TTL_ATTRIBUTE]: nowSeconds + IDEMPOTENCY_WINDOW_SECONDS,
              },
              // New, expired (TTL deletes only eventually), or held by a request that ran out of time.
              ConditionExpression:
                'attribute_not_exists(recordId) OR #ttl < :nowSeconds OR (#state = :inProgress AND lockedUntilMs < :nowMs)',
              ExpressionAttributeNames: NAMES,
              ExpressionAttributeValues: {
                ':nowSeconds': nowSeconds,
                ':nowMs': nowMs,
                ':inProgress': 'IN_PROGRESS',
              },
            }),
          ),
        );
        return { claimed: true };
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      }
      const { Item } = await dynamoCall(() =>
        this.db.send(
          new GetCommand({ TableName: this.tableName, Key: { recordId: id }, ConsistentRead: true }),
        ),
      );
      if (Item) return { claimed: false, record: toRecord(Item) };
    }
    // Claimed and released by others twice in a row: report it as in progress, the client retries.
    return { claimed: false, record: { state: 'IN_PROGRESS', fingerprint, lockedUntilMs: nowMs } };
  }

  async complete(
    id: string,
    fingerprint: string,
    response: { status: number; sealed: string },
  ): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { recordId: id },
          UpdateExpression:
            'SET #state = :complete, #status = :status, sealed = :sealed REMOVE lockedUntilMs',
          ConditionExpression: '#state = :inProgress AND fingerprint = :fingerprint',
          ExpressionAttributeNames: { '#state': 'state', '#status': 'status' },
          ExpressionAttributeValues: {
            ':complete': 'COMPLETE',
            ':inProgress': 'IN_PROGRESS',
            ':status': response.status,
            ':sealed': response.sealed,
            ':fingerprint': fingerprint,
          },
        }),
      ),
    );
  }

  async release(id: string, fingerprint: string): Promise<void> {
    try {
      await dynamoCall(() =>
        this.db.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { recordId: id },
            ConditionExpression: '#state = :inProgress AND fingerprint = :fingerprint',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':inProgress': 'IN_PROGRESS', ':fingerprint': fingerprint },
          }),
        ),
      );
    } catch (error) {
      // Already gone, or no longer ours: nothing to forget.
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    }
  }
}

function toRecord(item: Item): IdempotencyRecord {
  if (item.state === 'COMPLETE') {
    return {
      state: 'COMPLETE',
      fingerprint: String(item.fingerprint),
      status: Number(item.status),
      sealed: String(item.sealed),
    };
  }
  return {
    state: 'IN_PROGRESS',
    fingerprint: String(item.fingerprint),
    lockedUntilMs: Number(item.lockedUntilMs),
  };
}
