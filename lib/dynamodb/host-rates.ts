import { createHash } from 'node:crypto';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import { rateLimitWaitSeconds } from '#lib/domain/destinations';
import type { Clock, DestinationRateLimit } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { DynamoTable } from './table';

/** The prefix of a host counter's sort key: no endpoint id (`whe_…`) nor the registry can start with it. */
export const HOST_RATE_KEY_PREFIX = 'host-rate#';

/** How long a second's counter is kept after it: long past its second, then DynamoDB deletes it. */
export const HOST_RATE_TTL_SECONDS = 120;

/**
 * The per-host delivery counters in the webhooks table: one item per (host, second), partition
 * `host-rate#` + SHA-256 of the host (no host name is stored), sort key `host-rate#<second>`. The sort
 * key keeps them apart from every owner's endpoints and registry, whatever partition a user id names;
 * no read of an owner's endpoints (`whe_` keys) or registry meets them. One `UpdateItem` per delivery
 * (ADD, so concurrent workers each get their own count), deleted by TTL two minutes later.
 */
export class DynamoDestinationRateLimit extends DynamoTable implements DestinationRateLimit {
  constructor(
    db: DynamoDBDocumentClient,
    tableName: string,
    private readonly clock: Clock,
    private readonly perSecond: number,
  ) {
    super(db, tableName);
  }

  async admit(host: string): Promise<number> {
    const second = Math.floor(this.clock.now().getTime() / 1000);
    const answer = await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: {
            ownerUserId: `${HOST_RATE_KEY_PREFIX}${createHash('sha256').update(host).digest('hex')}`,
            webhookId: `${HOST_RATE_KEY_PREFIX}${second}`,
          },
          UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
          ExpressionAttributeNames: { '#count': 'deliveries', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':one': 1, ':ttl': second + HOST_RATE_TTL_SECONDS },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    return rateLimitWaitSeconds(Number(answer.Attributes?.deliveries ?? 1), this.perSecond);
  }
}
