import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import { StorageUnavailableError, WebhookLimitReachedError } from '#lib/domain/errors';
import { EVENT_TYPES, type EventType } from '#lib/domain/events';
import type { WebhookRepository } from '#lib/domain/ports';
import { isWebhookId, type WebhookEndpoint } from '#lib/domain/webhook';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable, type Item, optionalStringOf, queryAll } from './table';

/**
 * How long a deleted endpoint's tombstone is kept: a delete repeated within it (the SDK's retry after a
 * lost answer, the caller's after a 503) is recognised and answers as the delete did.
 */
export const WEBHOOK_TOMBSTONE_SECONDS = 24 * 60 * 60;

/** The sort key of an owner's registry of endpoint claims: no endpoint id (`whe_…`) can be it. */
export const WEBHOOK_REGISTRY_KEY = 'registry';

/**
 * How long a claim may stay without its endpoint (a create that failed between the two writes) before
 * another create may take the place back: far longer than a create runs (its 5 s DynamoDB budget).
 */
export const WEBHOOK_CLAIM_GRACE_SECONDS = 60;

/** Times a create reads the registry again after it changed under it (initialised, a place freed). */
const CLAIM_ROUNDS = 4;

/**
 * Webhook endpoints in DynamoDB, keyed by owner (partition) and endpoint id (sort). A deleted endpoint
 * leaves a tombstone under its key (`deletedAt`, nothing else of it) for `WEBHOOK_TOMBSTONE_SECONDS`;
 * every read skips tombstones, so a deleted endpoint is gone for listing and delivery alike.
 *
 * The per-owner bound holds under concurrent creates through the owner's **registry**, one item in the
 * owner's partition (sort key `registry`) mapping each endpoint id to when its place was claimed. A create
 * first claims a place with one conditional update, admitted only while the map holds fewer entries than
 * the bound (or already holds this id: a retry); DynamoDB applies updates of one item one after another,
 * so of seventeen creates at once exactly sixteen are admitted. Only then is the endpoint put. A delete
 * puts the tombstone, then gives the place back. DynamoDB's transactions would make the two writes one,
 * but the local runtime's dynalite has none; instead a place whose endpoint never came (or whose release
 * never ran) is taken back by a create that finds the registry full, once the claim is older than
 * `WEBHOOK_CLAIM_GRACE_SECONDS` and its endpoint is not live. An owner without a registry (none created
 * since this version) gets one listing its live endpoints on its first create.
 */
export class DynamoWebhookRepository extends DynamoTable implements WebhookRepository {
  async create(endpoint: WebhookEndpoint, limits: { maxPerOwner: number }): Promise<WebhookEndpoint> {
    await this.claim(endpoint, limits.maxPerOwner);
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
    return (await this.endpointItems(ownerUserId))
      .filter((item) => !isTombstone(item))
      .map(toEndpoint)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /** The owner's endpoint items and tombstones, read consistently: the `whe_` keys, never the registry. */
  private endpointItems(ownerUserId: string): Promise<Item[]> {
    return queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'ownerUserId = :owner AND begins_with(webhookId, :endpoint)',
      ExpressionAttributeValues: { ':owner': ownerUserId, ':endpoint': 'whe_' },
      ConsistentRead: true,
    });
  }

  /**
   * Takes a place for `endpoint` in its owner's registry, or throws `WebhookLimitReachedError`. A refused
   * claim reads the registry: none yet, it is made; full, places whose claim is stale are taken back;
   * either way the claim is tried again.
   */
  private async claim(endpoint: WebhookEndpoint, maxPerOwner: number): Promise<void> {
    const owner = endpoint.ownerUserId;
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const claimed = await conditionalWrite(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: { ownerUserId: owner, webhookId: WEBHOOK_REGISTRY_KEY },
          UpdateExpression: 'SET claims.#id = if_not_exists(claims.#id, :at)',
          ConditionExpression:
            'attribute_exists(claims) AND (size(claims) < :max OR attribute_exists(claims.#id))',
          ExpressionAttributeNames: { '#id': endpoint.id },
          ExpressionAttributeValues: { ':at': endpoint.createdAt, ':max': maxPerOwner },
        }),
      );
      if (claimed) return;
      const registry = await this.item(owner, WEBHOOK_REGISTRY_KEY);
      const claims = claimsOf(registry);
      if (claims === undefined) await this.startRegistry(owner);
      else if (Object.keys(claims).length >= maxPerOwner) {
        if (!(await this.releaseStale(owner, claims, endpoint.createdAt))) {
          throw new WebhookLimitReachedError(maxPerOwner);
        }
      }
    }
    // The registry kept changing under this create: a conflict to retry shortly, not a refusal.
    throw new StorageUnavailableError();
  }

  /** The owner's first registry: its live endpoints (made before registries existed), claimed when made. */
  private async startRegistry(ownerUserId: string): Promise<void> {
    const live = (await this.endpointItems(ownerUserId)).filter((item) => !isTombstone(item));
    await conditionalWrite(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ownerUserId,
          webhookId: WEBHOOK_REGISTRY_KEY,
          claims: Object.fromEntries(live.map((item) => [String(item.webhookId), String(item.createdAt)])),
        },
        // Another create may have made it meanwhile: then that one stands.
        ConditionExpression: 'attribute_not_exists(webhookId)',
      }),
    );
  }

  /**
   * Takes back the places whose claim is older than the grace period at `now` and whose endpoint is not
   * live (never written, or deleted without giving its place back). True when one was taken back.
   */
  private async releaseStale(
    ownerUserId: string,
    claims: Record<string, string>,
    now: string,
  ): Promise<boolean> {
    const before = new Date(Date.parse(now) - WEBHOOK_CLAIM_GRACE_SECONDS * 1000).toISOString();
    let released = false;
    for (const [id, claimedAt] of Object.entries(claims)) {
      if (claimedAt >= before) continue;
      const item = await this.item(ownerUserId, id);
      if (item && !isTombstone(item)) continue;
      released = (await this.release(ownerUserId, id, claimedAt)) || released;
    }
    return released;
  }

  /** Gives back the place of endpoint `id` (only while it holds the claim `claimedAt`, when given). */
  private release(ownerUserId: string, id: string, claimedAt?: string): Promise<boolean> {
    return conditionalWrite(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { ownerUserId, webhookId: WEBHOOK_REGISTRY_KEY },
        UpdateExpression: 'REMOVE claims.#id',
        ConditionExpression:
          claimedAt === undefined ? 'attribute_exists(claims.#id)' : 'claims.#id = :claimedAt',
        ExpressionAttributeNames: { '#id': id },
        ...(claimedAt === undefined ? {} : { ExpressionAttributeValues: { ':claimedAt': claimedAt } }),
      }),
    );
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
    const deleted = written || isTombstone((await this.item(ownerUserId, id)) ?? {});
    // Its place in the registry is free again (a repeated delete finds it freed already).
    if (deleted) await this.release(ownerUserId, id);
    return deleted;
  }

  /**
   * One conditional update of a live endpoint still at version `from`. A refusal is read back: the
   * endpoint carrying this rotation's id is this very write, landed with its answer lost (the SDK retried
   * it); another version is another rotation's; no live endpoint is not found.
   */
  async rotateSecret(
    ownerUserId: string,
    id: string,
    rotation: { from: number; previousUntil: string; rotationId: string },
  ): Promise<WebhookEndpoint | 'conflict' | undefined> {
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { ownerUserId, webhookId: id },
            UpdateExpression:
              'SET secretVersion = :to, previousSecretVersion = :from, previousSecretUntil = :until, secretRotationId = :rotation',
            ConditionExpression:
              rotation.from === 1
                ? 'attribute_exists(webhookId) AND attribute_not_exists(deletedAt) AND (attribute_not_exists(secretVersion) OR secretVersion = :from)'
                : 'attribute_exists(webhookId) AND attribute_not_exists(deletedAt) AND secretVersion = :from',
            ExpressionAttributeValues: {
              ':from': rotation.from,
              ':to': rotation.from + 1,
              ':until': rotation.previousUntil,
              ':rotation': rotation.rotationId,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return Attributes ? toEndpoint(Attributes) : undefined;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      const now = await this.get(ownerUserId, id);
      if (!now) return undefined;
      return now.secretRotationId === rotation.rotationId ? now : 'conflict';
    }
  }

  /**
   * Every endpoint of every owner: operator listings only. The scan meets everything the table holds (the
   * owners' registries, tombstones, the delivery counters of lib/adapters/dynamodb/host-rates.ts), so only items
   * keyed by an endpoint id (`whe_…`) that are no tombstone are endpoints.
   */
  async listAll(): Promise<WebhookEndpoint[]> {
    return (await this.scanAll())
      .filter((item) => isWebhookId(String(item.webhookId)) && !isTombstone(item))
      .map(toEndpoint)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}

/** An owner's claims (endpoint id to when its place was claimed), or undefined when it has no registry. */
function claimsOf(registry: Item | undefined): Record<string, string> | undefined {
  const claims = registry?.claims;
  return claims !== null && typeof claims === 'object' ? (claims as Record<string, string>) : undefined;
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
    ...secretVersionsOf(item),
  };
}

/** The endpoint's secret versions as stored; whole numbers of at least 1 only, else the creation's secret. */
function secretVersionsOf(
  item: Item,
): Pick<WebhookEndpoint, 'secretVersion' | 'previousSecret' | 'secretRotationId'> {
  const version = (value: unknown) =>
    Number.isInteger(value) && (value as number) >= 1 ? (value as number) : undefined;
  const current = version(item.secretVersion);
  const previous = version(item.previousSecretVersion);
  const until = item.previousSecretUntil;
  return {
    ...(current !== undefined ? { secretVersion: current } : {}),
    ...(previous !== undefined && typeof until === 'string'
      ? { previousSecret: { version: previous, until } }
      : {}),
    ...(typeof item.secretRotationId === 'string' ? { secretRotationId: item.secretRotationId } : {}),
  };
}
