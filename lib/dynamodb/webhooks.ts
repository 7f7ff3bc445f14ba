import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { EVENT_TYPES, type EventType } from '#lib/domain/events';
import type { WebhookRepository } from '#lib/domain/ports';
import type { WebhookEndpoint } from '#lib/domain/webhook';
import { dynamoCall } from './errors';
import { DynamoTable, type Item, optionalStringOf } from './table';

/** Webhook endpoints in DynamoDB, keyed by owner (partition) and endpoint id (sort). */
export class DynamoWebhookRepository extends DynamoTable implements WebhookRepository {
  async create(endpoint: WebhookEndpoint): Promise<WebhookEndpoint> {
    try {
      await dynamoCall(() =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: toItem(endpoint),
            ConditionExpression: 'attribute_not_exists(webhookId)',
          }),
        ),
      );
      return endpoint;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      // The id is fixed before the write (a keyed create reserves it), so an item with it is this
      // create's earlier attempt when it holds what this one wrote.
      const stored = await this.get(endpoint.ownerUserId, endpoint.id);
      if (stored && sameEndpoint(stored, endpoint)) return stored;
      throw new Error(`webhook endpoint ${endpoint.id} exists with other content`);
    }
  }

  async get(ownerUserId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { ownerUserId, webhookId: id },
          ConsistentRead: true,
        }),
      ),
    );
    return Item ? toEndpoint(Item) : undefined;
  }

  async list(ownerUserId: string): Promise<WebhookEndpoint[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await dynamoCall(() =>
        this.db.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'ownerUserId = :owner',
            ExpressionAttributeValues: { ':owner': ownerUserId },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items
      .map(toEndpoint)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async delete(ownerUserId: string, id: string): Promise<boolean> {
    const { Attributes } = await dynamoCall(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { ownerUserId, webhookId: id },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    return Attributes !== undefined;
  }

  /** Every endpoint of every owner: operator listings only. */
  async listAll(): Promise<WebhookEndpoint[]> {
    return (await this.scanAll()).map(toEndpoint).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
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
