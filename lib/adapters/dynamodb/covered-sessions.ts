import {
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { SESSION_SCOPE_INDEXES } from '#lib/definitions/tables';
import type { CutoffRecord, CutoffScope } from '#lib/domain/cutoffs';
import type {
  CoveredPage,
  CoveredRange,
  CoveredScope,
  CoveredSessions,
  UnlistedScope,
} from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';
import { recordIds, recordsOf } from './cutoff-record-items';
import { extendCutoffRecordExpiry } from './cutoff-records';
import { dynamoCall } from './errors';
import { isSessionItem, SCOPE_WRITE_SHARDS, shardedScopeKey, toStoredSession } from './session-items';
import { boardFilterOf, scopeKey } from './session-scopes';
import { DynamoTable, type Item } from './table';

/**
 * The sessions a cut-off record covers, read for the logouts of a revoke-all (lib/use-cases/logout-fan-out.ts): a
 * scope index one write shard at a time, oldest first, within the cut-off's range and filtered at the
 * index to sessions neither revoked on their own nor expired before it; then those sessions read again
 * consistently. The operators' scopes that no index holds (an external user across tenants, the whole
 * stage) are scanned instead, one of 16 segments at a time. A part's cursor is DynamoDB's own
 * `LastEvaluatedKey`, as JSON.
 */
export class DynamoCoveredSessions extends DynamoTable implements CoveredSessions {
  readonly coveredParts = SCOPE_WRITE_SHARDS;

  async readCutoffs(scopes: readonly CutoffScope[]): Promise<CutoffRecord[]> {
    // Copy 0: the copy whose changes start the logouts (the change feed reads it alone).
    const byId = recordIds(scopes, 0);
    if (byId.size === 0) return [];
    return recordsOf(await this.batchGetAll([...byId.keys()].map((id) => ({ id }))), byId);
  }

  async extendCutoffExpiry(scope: CutoffScope, until: number): Promise<void> {
    // Best effort against a flood of writes to the record: a step that loses every race leaves the
    // expiry to the record's own writers and to the steps after it.
    await extendCutoffRecordExpiry(
      {
        db: this.db,
        tableName: this.tableName,
        batchGetItems: (ids) => this.batchGetAll(ids.map((id) => ({ id }))),
      },
      scope,
      until,
    );
  }

  /** The sessions with these ids as they are now (strongly consistent); missing ids are left out. */
  private async getMany(ids: readonly string[]): Promise<StoredSession[]> {
    const items = await this.batchGetAll([...new Set(ids)].map((id) => ({ id })));
    return items.map(toStoredSession);
  }

  async coveredPage(
    scope: CoveredScope,
    part: number,
    range: CoveredRange,
    options: { after?: string; limit: number },
  ): Promise<CoveredPage> {
    const start = options.after !== undefined ? (JSON.parse(options.after) as Item) : undefined;
    if (isScanned(scope)) return this.scannedPage(scope, part, range, { start, limit: options.limit });
    const { partitionKey, value } = scopeKey(scope);
    // `createdKey` is `createdAt#id`, and `$` follows `#`: `T$` sorts after every session created at T.
    const values: Record<string, string> = {
      ':pk': shardedScopeKey(value, part),
      ':hi': `${range.upTo}$`,
      ':upTo': range.upTo,
    };
    let condition = `${partitionKey} = :pk AND createdKey <= :hi`;
    if (range.since !== undefined) {
      condition = `${partitionKey} = :pk AND createdKey BETWEEN :lo AND :hi`;
      values[':lo'] = `${range.since}$`;
    }
    const filters = ['expiresAt >= :upTo', 'attribute_not_exists(revokedAt)'];
    const board = boardFilterOf(scope);
    if (board !== undefined) {
      filters.push('boardId = :board');
      values[':board'] = board;
    }
    const input: QueryCommandInput = {
      TableName: this.tableName,
      IndexName: SESSION_SCOPE_INDEXES[scope.kind],
      KeyConditionExpression: condition,
      FilterExpression: filters.join(' AND '),
      ExpressionAttributeValues: values,
      ProjectionExpression: 'id',
      Limit: options.limit,
      ...(start !== undefined ? { ExclusiveStartKey: start } : {}),
    };
    const { Items, LastEvaluatedKey } = await dynamoCall(() => this.db.send(new QueryCommand(input)));
    // The index lags the table and holds only a few attributes: the sessions are read again, as they are now.
    const sessions = (await this.getMany((Items ?? []).map((item) => String(item.id)))).filter(
      (session) => session.revokedAt === null,
    );
    sessions.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
    return { sessions, ...(LastEvaluatedKey ? { next: JSON.stringify(LastEvaluatedKey) } : {}) };
  }

  private async scannedPage(
    scope: UnlistedScope,
    part: number,
    range: CoveredRange,
    options: { start: Item | undefined; limit: number },
  ): Promise<CoveredPage> {
    const values: Record<string, string> = { ':upTo': range.upTo };
    // Sessions only (cut-off records share the table and have no token hash).
    const filters = [
      'attribute_exists(tokenHash)',
      'createdAt <= :upTo',
      'expiresAt >= :upTo',
      'attribute_not_exists(revokedAt)',
    ];
    if (range.since !== undefined) {
      filters.push('createdAt > :since');
      values[':since'] = range.since;
    }
    if (scope.kind === 'allOfUser') {
      filters.push('userId = :user');
      values[':user'] = scope.userId;
    } else if (scope.kind === 'key') {
      filters.push('createdByKeyId = :key');
      values[':key'] = scope.keyId;
    } else if (scope.kind === 'orgCreator') {
      // Whose tenant each is, the fan-out decides from the session read whole (the record's own rule).
      filters.push('orgId = :org', 'createdByUserId = :creator');
      values[':org'] = scope.orgId;
      values[':creator'] = scope.creatorUserId;
    }
    const input: ScanCommandInput = {
      TableName: this.tableName,
      Segment: part,
      TotalSegments: this.coveredParts,
      ConsistentRead: true,
      FilterExpression: filters.join(' AND '),
      ExpressionAttributeValues: values,
      Limit: options.limit,
      ...(options.start !== undefined ? { ExclusiveStartKey: options.start } : {}),
    };
    const { Items, LastEvaluatedKey } = await dynamoCall(() => this.db.send(new ScanCommand(input)));
    const sessions = (Items ?? []).filter(isSessionItem).map(toStoredSession);
    return { sessions, ...(LastEvaluatedKey ? { next: JSON.stringify(LastEvaluatedKey) } : {}) };
  }
}

function isScanned(scope: CoveredScope): scope is UnlistedScope {
  return (
    scope.kind === 'allOfUser' ||
    scope.kind === 'stage' ||
    scope.kind === 'key' ||
    scope.kind === 'orgCreator'
  );
}
