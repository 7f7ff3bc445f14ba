import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import {
  IDEMPOTENCY_WINDOW_SECONDS,
  type IdempotencyAttempt,
  type IdempotencyRecord,
} from '#lib/domain/idempotency';
import type { IdempotencyRepository } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable, type Item } from './table';

const IN_PROGRESS = 'IN_PROGRESS';

/**
 * Idempotency records in DynamoDB, keyed by record id. Who holds a key is decided by conditional writes,
 * never by a read followed by a plain write; each write names its attempt, so the SDK's retry of a write
 * whose answer was lost is refused by the condition and then recognised on the re-read (use case). The
 * stored response and reservation are sealed (lib/domain/idempotency.ts).
 */
export class DynamoIdempotencyRepository extends DynamoTable implements IdempotencyRepository {
  async create(id: string, attempt: IdempotencyAttempt, now: Date): Promise<boolean> {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    return conditionalWrite(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: {
          recordId: id,
          state: IN_PROGRESS,
          fingerprint: attempt.fingerprint,
          attemptId: attempt.attemptId,
          lockedUntilMs: attempt.leaseUntilMs,
          ...(attempt.reservation !== undefined ? { reservation: attempt.reservation } : {}),
          [TTL_ATTRIBUTE]: nowSeconds + IDEMPOTENCY_WINDOW_SECONDS,
        },
        // New, or expired (TTL deletes only eventually).
        ConditionExpression: 'attribute_not_exists(recordId) OR #ttl < :nowSeconds',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':nowSeconds': nowSeconds },
      }),
    );
  }

  async get(id: string, now: Date): Promise<IdempotencyRecord | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({ TableName: this.tableName, Key: { recordId: id }, ConsistentRead: true }),
      ),
    );
    if (!Item || Number(Item[TTL_ATTRIBUTE]) < Math.floor(now.getTime() / 1000)) return undefined;
    return toRecord(Item);
  }

  async takeOver(
    id: string,
    attempt: IdempotencyAttempt,
    now: Date,
  ): Promise<{ reservation?: string } | undefined> {
    const nowMs = now.getTime();
    const reserve = attempt.reservation !== undefined;
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { recordId: id },
            UpdateExpression: `SET attemptId = :attempt, lockedUntilMs = :lease${
              reserve ? ', reservation = if_not_exists(reservation, :reservation)' : ''
            }`,
            ConditionExpression:
              '#state = :inProgress AND fingerprint = :fingerprint AND lockedUntilMs < :nowMs AND #ttl >= :nowSeconds',
            ExpressionAttributeNames: { '#state': 'state', '#ttl': TTL_ATTRIBUTE },
            ExpressionAttributeValues: {
              ':attempt': attempt.attemptId,
              ':lease': attempt.leaseUntilMs,
              ':inProgress': IN_PROGRESS,
              ':fingerprint': attempt.fingerprint,
              ':nowMs': nowMs,
              ':nowSeconds': Math.floor(nowMs / 1000),
              ...(reserve ? { ':reservation': attempt.reservation } : {}),
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      const reservation = Attributes?.reservation;
      return typeof reservation === 'string' ? { reservation } : {};
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    }
  }

  async complete(
    id: string,
    attemptId: string,
    response: { status: number; sealed: string },
  ): Promise<boolean> {
    // The condition names the attempt, not the state: the SDK's retry of a completion whose answer was
    // lost writes the same values again and succeeds; an attempt that was taken over writes nothing.
    return conditionalWrite(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { recordId: id },
        UpdateExpression:
          'SET #state = :complete, #status = :status, sealed = :sealed REMOVE lockedUntilMs, reservation',
        ConditionExpression: 'attemptId = :attempt',
        ExpressionAttributeNames: { '#state': 'state', '#status': 'status' },
        ExpressionAttributeValues: {
          ':complete': 'COMPLETE',
          ':status': response.status,
          ':sealed': response.sealed,
          ':attempt': attemptId,
        },
      }),
    );
  }

  async release(id: string, attemptId: string): Promise<void> {
    // Already taken over, or completed: nothing of ours to release.
    await conditionalWrite(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { recordId: id },
        UpdateExpression: 'SET lockedUntilMs = :over',
        ConditionExpression: '#state = :inProgress AND attemptId = :attempt',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':over': 0, ':inProgress': IN_PROGRESS, ':attempt': attemptId },
      }),
    );
  }
}

function toRecord(item: Item): IdempotencyRecord {
  const attemptId = typeof item.attemptId === 'string' ? { attemptId: item.attemptId } : {};
  if (item.state === 'COMPLETE') {
    return {
      state: 'COMPLETE',
      fingerprint: String(item.fingerprint),
      ...attemptId,
      status: Number(item.status),
      sealed: String(item.sealed),
    };
  }
  return {
    state: 'IN_PROGRESS',
    fingerprint: String(item.fingerprint),
    ...attemptId,
    lockedUntilMs: Number(item.lockedUntilMs),
    ...(typeof item.reservation === 'string' ? { reservation: item.reservation } : {}),
  };
}
