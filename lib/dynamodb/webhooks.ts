import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import { EVENT_TYPES, type EventType } from '#lib/domain/events';
import type { WebhookRepository } from '#lib/domain/ports';
import type { WebhookEndpoint } from '#lib/domain/webhook';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable, type Item, optionalStringOf, queryAll } from './table';

/**
 * How long a deleted endpoint's tombstone is kept: a delete repeated within it (the SDK's retry after a
 * lost answer, the caller's after a 503) is recognised and answers as the delete did.
 */
export const WEBHOOK_TOMBSTONE_SECONDS = 24 * 60 * 60;

/**
 * Webhook endpoints in DynamoDB, keyed by owner (partition) and endpoint id (sort). A deleted endpoint
 * leaves a tombstone under its key (`deletedAt`, nothing else of it) for `WEBHOOK_TOMBSTONE_SECONDS`;
 * every read skips tombstones, so a deleted endpoint is gone for listing and delivery alike.
 */
export class DynamoWebhookRepository extends DynamoTable implements WebhookRepository {
  async create(endpoint: WebhookEndpoint): Promise<WebhookEndpoint> {
    const written = await conditionalWrite(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: toItem(endpoint),
        ConditionExpression: 'attribute_not_exists(webhookId)',
      }),
    );
    if (written) return endpoint;
    // The id is fixed before the write (a keyed create reserves it), so an item with it is this
    // create's earlier attempt when it holds what this one wrote.
    const stored = await this.get(endpoint.ownerUserId, endpoint.id);
    if (stored && sameEndpoint(stored, endpoint)) return stored;
    throw new Error(`webhook endpoint ${endpoint.id} exists with other content`);
  }

  async get(ownerUserId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const item = await this.item(ownerUserId, id);
    return item && !isTombstone(item) ? toEndpoint(item) : undefined;
  }

  /** The item under the key, endpoint or tombstone, read consistently. */
  private async item(ownerUserId: string, id: string): Promise<Item | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { ownerUserId, webhookId: id },
          ConsistentRead: true,
        }),
      ),
    );
    return Item;
  }

  async list(ownerUserId: string): Promise<WebhookEndpoint[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'ownerUserId = :owner',
      ExpressionAttributeValues: { ':owner': ownerUserId },
      ConsistentRead: true,
    });
    return items
      .filter((item) => !isTombstone(item))
      .map(toEndpoint)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /**
   * Deletes the endpoint by replacing it with its tombstone, conditioned on a live endpoint under the
   * key. A refusal is read back: a tombstone there means the endpoint is deleted (by this very write, its
   * answer lost and the SDK retrying it, or by an earlier delete the caller is repeating), which is what
   * was asked: true. Nothing there: the owner never had it (or its tombstone expired): false.
   */
  async delete(ownerUserId: string, id: string, deletedAt: string): Promise<boolean> {
    const written = await conditionalWrite(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ownerUserId,
          webhookId: id,
          deletedAt,
          [TTL_ATTRIBUTE]: Math.ceil(Date.parse(deletedAt) / 1000) + WEBHOOK_TOMBSTONE_SECONDS,
        },
        ConditionExpression: 'attribute_exists(webhookId) AND attribute_not_exists(deletedAt)',
      }),
    );
    if (written) return true;
    const stored = await this.item(ownerUserId, id);
    return stored !== undefined && isTombstone(stored);
  }

  /** Every endpoint of every owner: operator listings only. */
  async listAll(): Promise<WebhookEndpoint[]> {
    return (await this.scanAll())
      .filter((item) => !isTombstone(item))
      .map(toEndpoint)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}

/** A deleted endpoint's tombstone: its key and `deletedAt`, nothing of the endpoint. */
function isTombstone(item: Item): boolean {
  return typeof item.deletedAt === 'string';
}

function sameEndpoint(a: WebhookEndpoint, b: WebhookEndpoint): boolean {
  return a.url === b.url && a.description === b.description && a.events.join() === b.events.join();
}

function toItem(endpoint: WebhookEndpoint): Item {
  const { id, description, events, ...rest } = endpoint;
  return { ...rest, webhookId: id, events: [...events], ...(description !== null ? { description } : {}) };
}

function toEndpoint(item: Item): WebhookEndpoint {
  const events = Array.isArray(item.events)
    ? (item.events.filter((type) => (EVENT_TYPES as readonly unknown[]).includes(type)) as EventType[])
    : [];
  return {
    id: String(item.webhookId),
    ownerUserId: String(item.ownerUserId),
    url: String(item.url),
    events,
    description: optionalStringOf(item, 'description'),
    createdAt: String(item.createdAt),
    createdByKeyId: String(item.createdByKeyId ?? ''),
  };
}
