import {
  type AttributeValue,
  type QueryCommandInput,
  QueryCommand as WireQueryCommand,
} from '@aws-sdk/client-dynamodb';
import { SESSION_SCOPE_INDEXES } from '#lib/definitions/tables';
import type {
  CountCandidate,
  ScopePage,
  ScopePartition,
  SessionPosition,
  SessionRef,
  SessionScope,
} from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { compositeKey, SCOPE_WRITE_SHARDS, shardedScopeKey } from './session-items';
import type { TableAccess } from './table';

/**
 * The reads of a scope (a user's or a board's sessions) through its write-sharded index: a page, its
 * shards one by one, and the candidates of a revoke-all's count. Every read here is a Query; the index
 * entries are read in DynamoDB's own attribute form, as they come.
 */

/** What tells which cut-off records could cover a session, besides its position (`createdKey`). */
const SUBJECT_ATTRIBUTES = ['orgId', 'userId', 'boardId', 'createdByUserId'] as const;
/** Operands DynamoDB allows in one `IN` list. */
const IN_OPERANDS_MAX = 100;
/**
 * Index entries per page of the count, per shard. A projected entry is about 0.3 KB, so a page stays
 * well under the 1 MB DynamoDB returns at most, and a shard of 6,250 entries (100,000 sessions) is four pages.
 */
export const STATE_PAGE_SIZE = 2_000;

/**
 * The active sessions of a scope created at or before `at` (after `after`, when given), with what tells
 * which cut-off records could cover each: every shard's index entries, a Query each, page after page.
 */
export async function queryScopeCandidates(
  table: TableAccess,
  scope: SessionScope,
  at: string,
  options: { exceptOrgs?: readonly string[]; after?: string } = {},
): Promise<CountCandidate[]> {
  const { partitionKey, value } = scopeKey(scope);
  const known = subjectOf(scope);
  // Only what the scope does not fix comes back: the fewer attributes, the less every page costs.
  // `expiresAt` tells how long the cut-off's record must live.
  const wanted = [...SUBJECT_ATTRIBUTES.filter((name) => known[name] === undefined), 'expiresAt'];
  // `createdKey` is `createdAt#id`, and `$` follows `#`: every session created at or before `at` sorts
  // below `at$`, every later one above it.
  const values: Record<string, unknown> = { ':below': `${at}$`, ':at': at };
  // Sessions created after `after` only: those at or before it sort below `after$`.
  if (options.after !== undefined) values[':after'] = `${options.after}$`;
  const range = options.after !== undefined ? 'createdKey BETWEEN :after AND :below' : 'createdKey < :below';
  // Active at `at`: not expired then (ISO times of one format compare as text), not revoked on its own.
  const filters = ['expiresAt > :at', 'attribute_not_exists(revokedAt)'];
  const boardFilter = boardFilterOf(scope);
  if (boardFilter !== undefined) {
    filters.push('boardId = :board');
    values[':board'] = boardFilter;
  }
  const exceptOrgs = options.exceptOrgs ?? [];
  if (exceptOrgs.length > 0 && exceptOrgs.length <= IN_OPERANDS_MAX) {
    exceptOrgs.forEach((orgId, i) => {
      values[`:o${i}`] = orgId;
    });
    filters.push(`NOT orgId IN (${exceptOrgs.map((_, i) => `:o${i}`).join(', ')})`);
  }
  const shards = await Promise.all(
    Array.from({ length: SCOPE_WRITE_SHARDS }, async (_, shard) => {
      const found: CountCandidate[] = [];
      const input: QueryCommandInput = {
        TableName: table.tableName,
        IndexName: SESSION_SCOPE_INDEXES[scope.kind],
        KeyConditionExpression: `${partitionKey} = :pk AND ${range}`,
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeValues: wireStrings({ ...values, ':pk': shardedScopeKey(value, shard) }),
        ProjectionExpression: ['createdKey', ...wanted].join(', '),
        Limit: STATE_PAGE_SIZE,
      };
      // DynamoDB's own attribute values, read as they come: the document client would first copy every
      // entry of up to 100,000 into plain values, which this count reads once and drops.
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await dynamoCall(() =>
          table.db.send(
            new WireQueryCommand({
              ...input,
              ...(start !== undefined ? { ExclusiveStartKey: start } : {}),
            }),
          ),
        );
        for (const entry of page.Items ?? []) found.push(toCandidate(entry, known));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      return found;
    }),
  );
  return shards.flat();
}

/** Up to `limit` sessions of a scope below `below`, newest first: each shard's newest, merged. */
export async function queryScope(
  table: TableAccess,
  scope: SessionScope,
  options: { below?: SessionPosition; limit: number },
): Promise<ScopePage> {
  // Each shard's newest `limit` below the cursor, all shards at once; their merge is the scope's page.
  const pages = await Promise.all(scopePartitions(table, scope).map((partition) => partition.page(options)));
  return mergeShardPages(pages, options.limit);
}

/** The shards of a scope's index, each read newest first a page at a time. */
export function scopePartitions(table: TableAccess, scope: SessionScope): ScopePartition[] {
  const { partitionKey, value } = scopeKey(scope);
  const boardFilter = boardFilterOf(scope);
  return Array.from({ length: SCOPE_WRITE_SHARDS }, (_, shard) => ({
    page: async (options: { below?: SessionPosition; limit: number }): Promise<ScopePage> => {
      const values: Record<string, string> = { ':pk': shardedScopeKey(value, shard) };
      let condition = `${partitionKey} = :pk`;
      if (options.below !== undefined) {
        condition += ' AND createdKey < :below';
        values[':below'] = options.below;
      }
      // A user's sessions narrowed to one board: the index holds boardId, so the filter costs no extra read.
      if (boardFilter !== undefined) values[':board'] = boardFilter;
      const { Items, LastEvaluatedKey } = await dynamoCall(() =>
        table.db.send(
          new WireQueryCommand({
            TableName: table.tableName,
            IndexName: SESSION_SCOPE_INDEXES[scope.kind],
            KeyConditionExpression: condition,
            ExpressionAttributeValues: wireStrings(values),
            ...(boardFilter !== undefined ? { FilterExpression: 'boardId = :board' } : {}),
            ScanIndexForward: false,
            Limit: options.limit,
          }),
        ),
      );
      return { refs: (Items ?? []).map(toRef), next: LastEvaluatedKey?.createdKey?.S };
    },
  }));
}

/** What a scope fixes of every session it holds. */
function subjectOf(scope: SessionScope): Partial<Record<(typeof SUBJECT_ATTRIBUTES)[number], string>> {
  switch (scope.kind) {
    case 'orgUser':
      return { orgId: scope.orgId, userId: scope.userId, boardId: scope.boardId };
    case 'creatorUser':
      return { createdByUserId: scope.creatorUserId, userId: scope.userId, boardId: scope.boardId };
    case 'board':
      return { boardId: scope.boardId };
    case 'creatorBoard':
      return { createdByUserId: scope.creatorUserId, boardId: scope.boardId };
  }
}

/** String values in DynamoDB's own form, for a command sent without the document client's marshalling. */
function wireStrings(values: Record<string, string>): Record<string, AttributeValue> {
  const wire: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(values)) wire[name] = { S: value };
  return wire;
}

/** A count candidate from an index entry, in DynamoDB's own form, and what its scope fixes. */
function toCandidate(
  entry: Record<string, AttributeValue>,
  known: ReturnType<typeof subjectOf>,
): CountCandidate {
  // `createdAt#id`: ISO times hold no `#`.
  const position = entry.createdKey?.S ?? '';
  const split = position.indexOf('#');
  return {
    id: position.slice(split + 1),
    createdAt: position.slice(0, split),
    orgId: known.orgId ?? entry.orgId?.S ?? '',
    userId: known.userId ?? entry.userId?.S ?? '',
    boardId: known.boardId ?? entry.boardId?.S ?? '',
    createdByUserId: known.createdByUserId ?? entry.createdByUserId?.S ?? '',
    expiresAt: entry.expiresAt?.S ?? '',
  };
}

/**
 * A scope index entry, in DynamoDB's own form, as a reference: with the session's state where the index
 * projects it (every scope index but `creatorBoard-index`, which holds keys only).
 */
function toRef(item: Record<string, AttributeValue>): SessionRef {
  const expiresAt = item.expiresAt?.S;
  return {
    id: item.id?.S ?? '',
    position: item.createdKey?.S ?? '',
    createdByUserId: item.createdByUserId?.S,
    ...(expiresAt !== undefined
      ? {
          state: {
            orgId: item.orgId?.S ?? '',
            userId: item.userId?.S ?? '',
            boardId: item.boardId?.S ?? '',
            createdByUserId: item.createdByUserId?.S ?? '',
            expiresAt,
            revokedAt: item.revokedAt?.S ?? null,
          },
        }
      : {}),
  };
}

/** The board a user's scope is narrowed to, filtered on the index (which holds `boardId`). */
export function boardFilterOf(scope: SessionScope): string | undefined {
  return scope.kind === 'orgUser' || scope.kind === 'creatorUser' ? scope.boardId : undefined;
}

/** The index and the scope's key, before sharding, that hold a scope. */
export function scopeKey(scope: SessionScope): { partitionKey: string; value: string } {
  switch (scope.kind) {
    case 'orgUser':
      return { partitionKey: 'orgUserShardKey', value: compositeKey('org-user', scope.orgId, scope.userId) };
    case 'creatorUser':
      return {
        partitionKey: 'creatorUserShardKey',
        value: compositeKey('creator-user', scope.creatorUserId, scope.userId),
      };
    case 'board':
      return { partitionKey: 'boardShardKey', value: scope.boardId };
    case 'creatorBoard':
      return {
        partitionKey: 'creatorBoardShardKey',
        value: compositeKey('creator-board', scope.creatorUserId, scope.boardId),
      };
  }
}

/**
 * Merges the pages of a scope's shards into the scope's page, in the order and with the cursor an
 * unsharded index gives. Each shard page holds that shard's newest entries below the cursor, newest first
 * (a Query with `Limit: limit`, `ScanIndexForward: false`, `createdKey < below`), and `next` is the last
 * position it evaluated when it stopped at its limit. A filtered page can stop short of `limit` refs, so
 * a shard with more may still hold, below its `next`, a session newer than another shard's last ref: only
 * the refs at or above the highest `next` of the shards with more are certain to be the scope's newest,
 * and the page returns the newest `limit` of those. Without a filter that bound never cuts: a shard with
 * more returned `limit` refs, all at or above its `next`. `next` is the last returned position (positions
 * are unique and globally ordered, so it resumes every shard exactly below it), or the bound itself when
 * no ref is certain yet, and undefined when every shard is exhausted.
 */
export function mergeShardPages(pages: readonly ScopePage[], limit: number): ScopePage {
  let bound: SessionPosition | undefined;
  for (const page of pages) {
    if (page.next !== undefined && (bound === undefined || page.next > bound)) bound = page.next;
  }
  const all = pages.flatMap((page) =>
    bound === undefined ? page.refs : page.refs.filter((ref) => ref.position >= (bound as string)),
  );
  all.sort((a, b) => (a.position < b.position ? 1 : a.position > b.position ? -1 : 0));
  const refs = all.slice(0, limit);
  const more = bound !== undefined || all.length > refs.length;
  if (!more) return { refs, next: undefined };
  return { refs, next: refs.length > 0 ? refs[refs.length - 1]?.position : bound };
}
