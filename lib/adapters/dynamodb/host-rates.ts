import { createHash } from 'node:crypto';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import {
  fairShareWaitSeconds,
  rateLimitWaitSeconds,
  WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
} from '#lib/domain/destinations';
import type { Clock, DestinationRateLimit } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { DynamoTable } from './table';

/** The prefix of a host counter's sort key: no endpoint id (`whe_…`) nor the registry can start with it. */
export const HOST_RATE_KEY_PREFIX = 'host-rate#';

/** How long a second's counter is kept after it: long past its second, then DynamoDB deletes it. */
export const HOST_RATE_TTL_SECONDS = 120;

/** The partition of an owner's counters on a host: one hash of both, so neither is stored. */
export function ownerHostRatePartition(host: string, ownerUserId: string): string {
  return `${HOST_RATE_KEY_PREFIX}${createHash('sha256')
    .update(JSON.stringify([host, ownerUserId]))
    .digest('hex')}`;
}

/** The partition of a host's counters, every owner's deliveries together. */
function hostRatePartition(host: string): string {
  return `${HOST_RATE_KEY_PREFIX}${createHash('sha256').update(host).digest('hex')}`;
}

/**
 * The per-host delivery counters in the webhooks table, one item per window and second: the host's
 * (partition `host-rate#` + SHA-256 of the host) and each owner's share of it (partition `host-rate#` +
 * SHA-256 of the host and the owner id together); no host name nor owner id is stored. Sort key
 * `host-rate#<second>`, which keeps them apart from every owner's endpoints and registry, whatever
 * partition a user id names; no read of an owner's endpoints (`whe_` keys) or registry meets them. Each
 * count is one `UpdateItem` (ADD, so concurrent workers each get their own count), deleted by TTL two
 * minutes later. A delivery with an owner costs its owner's count, and the host's only when within the
 * owner's share (`fairShareWaitSeconds`): a flooding owner's extra counts land in its own partition,
 * never on the host's item. Without an owner only the host is counted.
 */
export class DynamoDestinationRateLimit extends DynamoTable implements DestinationRateLimit {
  constructor(
    db: DynamoDBDocumentClient,
    tableName: string,
    private readonly clock: Clock,
    private readonly perSecond: number,
    private readonly perOwnerPerSecond = Math.min(
      perSecond,
      WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
    ),
  ) {
    super(db, tableName);
  }

  async admit(host: string, ownerUserId?: string): Promise<number> {
    const second = Math.floor(this.clock.now().getTime() / 1000);
    const hostCount = () => this.count(hostRatePartition(host), second);
    if (ownerUserId === undefined) return rateLimitWaitSeconds(await hostCount(), this.perSecond);
    return fairShareWaitSeconds(
      { owner: () => this.count(ownerHostRatePartition(host, ownerUserId), second), host: hostCount },
      { perHost: this.perSecond, perOwner: this.perOwnerPerSecond },
    );
  }

  /** Counts one delivery in the window `partition` keeps for `second`; answers the window's count. */
  private async count(partition: string, second: number): Promise<number> {
    const answer = await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { ownerUserId: partition, webhookId: `${HOST_RATE_KEY_PREFIX}${second}` },
          UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
          ExpressionAttributeNames: { '#count': 'deliveries', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':one': 1, ':ttl': second + HOST_RATE_TTL_SECONDS },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    return Number(answer.Attributes?.deliveries ?? 1);
  }
}
