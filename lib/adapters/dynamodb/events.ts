import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  EVENT_OWNER_INDEX,
  EVENT_SESSION_INDEX,
  EVENT_TYPE_INDEX,
  TTL_ATTRIBUTE,
} from '#lib/definitions/tables';
import { type EmbedEvent, type EventType, minuteBucket, type RoutedEvent } from '#lib/domain/events';
import type { DueNote, EventRecorder, ExpiryNotes } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable, type Item, queryAll } from './table';

/** How long the events API keeps an event. */
export const EVENT_RETENTION_SECONDS = 30 * 24 * 60 * 60;
const EVENT_SORT_KEY = 'event';
const DUE_PREFIX = 'due#';

/** An event's place in its owner's and its session's order: `occurredAt#id`, newest first when read backwards. */
export type EventPosition = string;

/** One page of stored events, newest first, and the position to continue below when more may follow. */
export interface EventPage {
  events: EmbedEvent[];
  next: EventPosition | undefined;
}

/** The position of an event: its time, then its id (ids are unique, so positions are too). */
export function eventPosition(event: EmbedEvent): EventPosition {
  return `${event.occurredAt}#${event.id}`;
}

/**
 * How many partitions a minute's due notes are spread over: the sessions expiring in one minute may be
 * written at a create rate above the 1,000 writes a second one DynamoDB partition takes, and the sweep
 * reads the partitions in parallel.
 */
export const DUE_PARTITIONS = 16;

/** The partition of a session's due note: the first byte of SHA-256 of its id, modulo DUE_PARTITIONS. */
export function duePartition(sessionId: string): number {
  return (createHash('sha256').update(sessionId).digest()[0] as number) % DUE_PARTITIONS;
}

/** The key of a due note: `due#<minute>#<partition>`, or `due#<minute>` for a legacy one. */
function dueKey(note: DueNote): { pk: string; sk: string } {
  const bucket = minuteBucket(new Date(note.expiresAt));
  return {
    pk: note.legacy ? `${DUE_PREFIX}${bucket}` : `${DUE_PREFIX}${bucket}#${duePartition(note.sessionId)}`,
    sk: note.sessionId,
  };
}

/**
 * The events table (lib/definitions/tables.ts): one item per event under its id, found by owner (the
 * events API) or by session; and the expiry sweep's due items, one per session under the minute of its
 * expiry.
 */
export class DynamoEventStore extends DynamoTable implements EventRecorder, ExpiryNotes {
  /**
   * Records an event once. The put is conditioned on no item under the event's id: when it fails, an
   * event with this id is stored already (this write, its answer lost and the SDK retrying; or an
   * earlier delivery of the same record), and the event is recorded: ids are fixed by session and type
   * (or by the cut-off entry), so the stored one is this event. Answers whether this call was the one that stored it.
   */
  async record(routed: RoutedEvent): Promise<boolean> {
    const { event } = routed;
    try {
      await dynamoCall(() =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              pk: event.id,
              sk: EVENT_SORT_KEY,
              // Index keys only where they exist: a revoke-all's event is in no session's index, and an
              // operator's in no owner's (it is kept for its id alone).
              ...(routed.ownerUserId !== null
                ? { ownerUserId: routed.ownerUserId, ownerType: ownerTypeKey(routed.ownerUserId, event.type) }
                : {}),
              ...(routed.sessionId !== null ? { sessionId: routed.sessionId } : {}),
              ...(routed.boardId !== null ? { boardId: routed.boardId } : {}),
              type: event.type,
              position: eventPosition(event),
              // JSON text, so the session's metadata comes back exactly as it was (see sessions.ts).
              event: JSON.stringify(event),
              [TTL_ATTRIBUTE]: Math.ceil(Date.parse(event.occurredAt) / 1000) + EVENT_RETENTION_SECONDS,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return true;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      const stored = await this.get(event.id);
      // Refused, yet nothing there: not a write of ours being recognised, so never report success.
      if (!stored) throw error;
      return false;
    }
  }

  /** The stored event with this id, read consistently. */
  async get(id: string): Promise<EmbedEvent | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { pk: id, sk: EVENT_SORT_KEY },
          ConsistentRead: true,
        }),
      ),
    );
    return Item ? toEvent(Item) : undefined;
  }

  /**
   * A page of one owner's events (or one session's, when `sessionId` is given: the owner's only), newest
   * first, below `below`, of `type` when given. Up to `limit` index entries are read per call; a type
   * filter can leave a page short, with a position to go on from.
   */
  async page(query: {
    ownerUserId: string;
    sessionId?: string;
    type?: EventType;
    below?: EventPosition;
    limit: number;
  }): Promise<EventPage> {
    if (query.type !== undefined && query.sessionId === undefined)
      return this.pageOfType({ ...query, type: query.type });
    const bySession = query.sessionId !== undefined;
    const values: Item = { ':pk': bySession ? query.sessionId : query.ownerUserId };
    let condition = `${bySession ? 'sessionId' : 'ownerUserId'} = :pk`;
    if (query.below !== undefined) {
      condition += ' AND #position < :below';
      values[':below'] = query.below;
    }
    const filters: string[] = [];
    if (bySession) {
      filters.push('ownerUserId = :owner');
      values[':owner'] = query.ownerUserId;
    }
    if (query.type !== undefined) {
      filters.push('#type = :type');
      values[':type'] = query.type;
    }
    const { Items, LastEvaluatedKey } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: bySession ? EVENT_SESSION_INDEX : EVENT_OWNER_INDEX,
          KeyConditionExpression: condition,
          ...(query.below !== undefined || query.type !== undefined
            ? {
                ExpressionAttributeNames: {
                  ...(query.below !== undefined ? { '#position': 'position' } : {}),
                  ...(query.type !== undefined ? { '#type': 'type' } : {}),
                },
              }
            : {}),
          ExpressionAttributeValues: values,
          ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
          ScanIndexForward: false,
          Limit: query.limit,
        }),
      ),
    );
    return {
      events: (Items ?? []).map(toEvent),
      next: LastEvaluatedKey ? String(LastEvaluatedKey.position) : undefined,
    };
  }

  /**
   * A page of one owner's events of one type, from the index of exactly those (keys only), then the
   * events themselves by their key: what is read is what the page answers.
   */
  private async pageOfType(query: {
    ownerUserId: string;
    type: EventType;
    below?: EventPosition;
    limit: number;
  }): Promise<EventPage> {
    const values: Item = { ':pk': ownerTypeKey(query.ownerUserId, query.type) };
    if (query.below !== undefined) values[':below'] = query.below;
    const { Items, LastEvaluatedKey } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: EVENT_TYPE_INDEX,
          KeyConditionExpression: `ownerType = :pk${query.below !== undefined ? ' AND #position < :below' : ''}`,
          ...(query.below !== undefined ? { ExpressionAttributeNames: { '#position': 'position' } } : {}),
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: query.limit,
        }),
      ),
    );
    const keys = (Items ?? []).map((item) => ({ pk: item.pk, sk: item.sk }));
    const byId = new Map((await this.batchGetAll(keys)).map((item) => [String(item.pk), toEvent(item)]));
    return {
      // In the index's order; an event DynamoDB's TTL deleted in between is left out.
      events: keys.flatMap((key) => byId.get(String(key.pk)) ?? []),
      next: LastEvaluatedKey ? String(LastEvaluatedKey.position) : undefined,
    };
  }

  /**
   * Notes that a session expires at `expiresAt`, under that minute's bucket, in the session's partition
   * of it, for the expiry sweep.
   */
  async scheduleExpiry(sessionId: string, expiresAt: string): Promise<void> {
    // Unconditional: writing the same note again (a redelivered record) sets the same values.
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...dueKey({ sessionId, expiresAt }),
            expiresAt,
            [TTL_ATTRIBUTE]: Math.ceil(Date.parse(expiresAt) / 1000) + EVENT_RETENTION_SECONDS,
          },
        }),
      ),
    );
  }

  /**
   * The sessions noted as expiring in the minute `bucket` (`minuteBucket`), with their expiry: every
   * partition of the minute read at once, and the notes written before there were partitions.
   */
  async dueIn(bucket: string): Promise<DueNote[]> {
    const partitions = await Promise.all(
      [...Array.from({ length: DUE_PARTITIONS }, (_, partition) => `#${partition}`), ''].map((suffix) =>
        queryAll(this.db, {
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `${DUE_PREFIX}${bucket}${suffix}` },
          ConsistentRead: true,
        }),
      ),
    );
    return partitions.flatMap((items, at) =>
      items.map((item) => ({
        sessionId: String(item.sk),
        expiresAt: String(item.expiresAt),
        ...(at === DUE_PARTITIONS ? { legacy: true as const } : {}),
      })),
    );
  }

  /** Forgets a due note once its session's expiry is recorded and published. */
  async clearDue(note: DueNote): Promise<void> {
    await dynamoCall(() => this.db.send(new DeleteCommand({ TableName: this.tableName, Key: dueKey(note) })));
  }

  /** The last minute bucket the expiry sweep went through completely, if it ever did. */
  async sweptThrough(): Promise<string | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: SWEEP_KEY, ConsistentRead: true })),
    );
    return typeof Item?.bucket === 'string' ? Item.bucket : undefined;
  }

  /** Records that the sweep went through `bucket`; never moves the mark back (two sweeps at once). */
  async markSwept(bucket: string): Promise<void> {
    // Another sweep (or this one's lost answer) marked this bucket or a later one: as good.
    await conditionalWrite(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: SWEEP_KEY,
        UpdateExpression: 'SET #bucket = :bucket',
        ConditionExpression: 'attribute_not_exists(#bucket) OR #bucket < :bucket',
        ExpressionAttributeNames: { '#bucket': 'bucket' },
        ExpressionAttributeValues: { ':bucket': bucket },
      }),
    );
  }
}

const SWEEP_KEY = { pk: 'sweep', sk: 'expiry' };

/** The type index's key of an owner's events of one type: `<type>#<owner>` (types hold no `#`). */
function ownerTypeKey(ownerUserId: string, type: EventType): string {
  return `${type}#${ownerUserId}`;
}

function toEvent(item: Item): EmbedEvent {
  return JSON.parse(String(item.event)) as EmbedEvent;
}
