import { createHash } from 'node:crypto';
import {
  type AttributeValue,
  type QueryCommandInput,
  QueryCommand as WireQueryCommand,
} from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  SESSION_SCOPE_INDEXES,
  SESSION_STATE_ATTRIBUTES,
  SESSION_TOKEN_INDEX,
  TTL_ATTRIBUTE,
} from '#lib/definitions/tables';
import { type CutoffRecord, type CutoffScope, cutoffScopesOf, withCutoffs } from '#lib/domain/cutoffs';
import type {
  CountCandidate,
  IndexedState,
  ScopePage,
  ScopePartition,
  SessionPosition,
  SessionRef,
  SessionRepository,
  SessionScope,
  TokenMatch,
} from '#lib/domain/ports';
import type { Revocation, SessionBinding, StoredSession } from '#lib/domain/session';
import { legacyTenant, parseTenant } from '#lib/domain/tenant';
import { anyCutoffCopy, cutoffCopyOf, isCutoffItem, recordIds, recordsOf } from './cutoff-records';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable, type Item, optionalStringOf } from './table';

const NOT_REVOKED = 'attribute_exists(id) AND attribute_not_exists(revokedAt)';
/** What tells which cut-off records could cover a session, besides its position (`createdKey`). */
const SUBJECT_ATTRIBUTES = ['orgId', 'userId', 'boardId', 'createdByUserId'] as const;
/** Operands DynamoDB allows in one `IN` list. */
const IN_OPERANDS_MAX = 100;
/**
 * Index entries per page of the count, per shard. A projected entry is about 0.3 KB, so a page stays
 * well under the 1 MB DynamoDB returns at most, and a shard of 6,250 entries (100,000 sessions) is four pages.
 */
export const STATE_PAGE_SIZE = 2_000;

/** Only a session created to bind, not bound and not revoked yet: the first binding wins, once. */
const BINDABLE = `${NOT_REVOKED} AND bindToBrowser = :yes AND attribute_not_exists(bindingHash)`;

/**
 * Sessions in DynamoDB, keyed by `id`, found by token through the token-hash index and listed through
 * the scope indexes (lib/definitions/tables.ts).
 *
 * `metadata` is stored as its JSON text rather than as a native map: the SDK's marshaller silently drops a
 * `__proto__` key and throws on a `constructor` key holding an object, and the customer's data must come
 * back exactly as it was sent. JSON.parse on the way out defines such keys as plain own properties.
 */
export class DynamoSessionRepository extends DynamoTable implements SessionRepository {
  async lookupToken(tokenHash: string): Promise<TokenMatch | undefined> {
    const { Items } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: SESSION_TOKEN_INDEX,
          KeyConditionExpression: 'tokenHash = :h',
          ExpressionAttributeValues: { ':h': tokenHash },
          ProjectionExpression: 'id, boardId, orgId, userId, createdByUserId, createdByKeyId',
          Limit: 1,
        }),
      ),
    );
    const item = Items?.[0];
    return item
      ? {
          id: String(item.id),
          boardId: String(item.boardId),
          orgId: optionalStringOf(item, 'orgId') ?? '',
          userId: String(item.userId),
          createdByUserId: optionalStringOf(item, 'createdByUserId') ?? '',
          createdByKeyId: optionalStringOf(item, 'createdByKeyId') ?? '',
        }
      : undefined;
  }

  async getCovered(match: TokenMatch): Promise<StoredSession | undefined> {
    // One copy of each record: the one this session's loads read, so no copy takes them all.
    const byId = recordIds(cutoffScopesOf(match), cutoffCopyOf(match.id));
    const items = await this.batchGetAll([{ id: match.id }, ...[...byId.keys()].map((id) => ({ id }))]);
    const item = items.find((candidate) => candidate.id === match.id);
    if (!item) return undefined;
    return withCutoffs(toStoredSession(item), recordsOf(items, byId));
  }

  async readCutoffs(scopes: readonly CutoffScope[]): Promise<CutoffRecord[]> {
    const byId = recordIds(scopes, anyCutoffCopy());
    if (byId.size === 0) return [];
    const items = await this.batchGetAll([...byId.keys()].map((id) => ({ id })));
    return recordsOf(items, byId);
  }

  async applyCutoffs(sessions: readonly StoredSession[]): Promise<StoredSession[]> {
    if (sessions.length === 0) return [];
    // One session (an embed load, a retrieve): the copy its id picks, as `getCovered` reads; a page: any.
    const [only] = sessions;
    const copy = sessions.length === 1 && only ? cutoffCopyOf(only.id) : anyCutoffCopy();
    const byId = recordIds(sessions.flatMap(cutoffScopesOf), copy);
    const records = recordsOf(await this.batchGetAll([...byId.keys()].map((id) => ({ id }))), byId);
    return sessions.map((session) => withCutoffs(session, records));
  }

  async get(id: string): Promise<StoredSession | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { id }, ConsistentRead: true })),
    );
    return Item ? toStoredSession(Item) : undefined;
  }

  async bind(id: string, binding: SessionBinding): Promise<boolean> {
    // The only update the embed page makes: the binding's two attributes, nothing else.
    return this.updateIf(id, 'SET bindingHash = :hash, boundAt = :at', BINDABLE, {
      ':hash': binding.bindingHash,
      ':at': binding.boundAt,
      ':yes': true,
    });
  }

  async markOpened(id: string, openedAt: string): Promise<void> {
    // Opened already: by another load at the same moment, or by this very write, its answer lost and the
    // SDK retrying it. Either way the first opening is recorded; a session deleted meanwhile needs none.
    // One attribute, set once: the stream carries it as session.opened.
    await this.updateIf(id, 'SET openedAt = :at', 'attribute_exists(id) AND attribute_not_exists(openedAt)', {
      ':at': openedAt,
    });
  }

  async unbind(id: string, bindingHash: string): Promise<void> {
    // Not bound with this binding (it never landed, or another load bound it): nothing to undo.
    await this.updateIf(id, 'REMOVE bindingHash, boundAt', 'bindingHash = :hash', { ':hash': bindingHash });
  }

  /** One conditional update of a session: true when written, false when its condition refused it. */
  private updateIf(
    id: string,
    update: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    return conditionalWrite(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { id },
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
      }),
    );
  }

  async create(session: StoredSession): Promise<StoredSession> {
    try {
      await dynamoCall(() =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: toItem(session),
            // A single conditional put: the session is written whole or not at all, never over another.
            ConditionExpression: 'attribute_not_exists(id)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return session;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      // When a put's answer is lost after the write landed, the SDK retries it and the retry meets the
      // session it has just written; a keyed create run again meets the session its first run wrote (same
      // id and token, fixed when it claimed its key). Both are a success. Another session under this id is
      // a refusal.
      const mine = await this.ownEarlierWrite(session, error as { Item?: Item });
      if (!mine) throw error;
      return mine;
    }
  }

  /** The stored session a conditional put was refused over, when it is `session` (same token hash). */
  private async ownEarlierWrite(
    session: StoredSession,
    refusal: { Item?: Item },
  ): Promise<StoredSession | undefined> {
    // Engines that return the refused item tell at once when it is another session's.
    if (refusal.Item && attributeString(refusal.Item.tokenHash) !== session.tokenHash) return undefined;
    // Read the session as it is now (dynalite ignores ReturnValuesOnConditionCheckFailure).
    const stored = await this.get(session.id);
    return stored?.tokenHash === session.tokenHash ? stored : undefined;
  }

  async scopeCandidates(
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
    const range =
      options.after !== undefined ? 'createdKey BETWEEN :after AND :below' : 'createdKey < :below';
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
          TableName: this.tableName,
          IndexName: SESSION_SCOPE_INDEXES[scope.by],
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
            this.db.send(
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

  async getMany(ids: readonly string[]): Promise<StoredSession[]> {
    const items = await this.batchGetAll([...new Set(ids)].map((id) => ({ id })));
    return items.map(toStoredSession);
  }

  async scanScope(
    scope: SessionScope,
    options: { below?: SessionPosition; limit: number },
  ): Promise<ScopePage> {
    // Each shard's newest `limit` below the cursor, all shards at once; their merge is the scope's page.
    const pages = await Promise.all(this.scopePartitions(scope).map((partition) => partition.page(options)));
    return mergeShardPages(pages, options.limit);
  }

  scopePartitions(scope: SessionScope): ScopePartition[] {
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
          this.db.send(
            new WireQueryCommand({
              TableName: this.tableName,
              IndexName: SESSION_SCOPE_INDEXES[scope.by],
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

  async statesOf(
    ids: readonly string[],
  ): Promise<Array<IndexedState & Pick<StoredSession, 'id' | 'createdAt'>>> {
    // Only what decides the status: a session's metadata (up to 32 KB) never leaves the table here.
    const items = await this.batchGetAll(
      [...new Set(ids)].map((id) => ({ id })),
      `id, createdAt, ${SESSION_STATE_ATTRIBUTES.join(', ')}`,
    );
    return items.map((item) => ({
      id: String(item.id),
      createdAt: String(item.createdAt),
      orgId: optionalStringOf(item, 'orgId') ?? '',
      userId: String(item.userId),
      boardId: String(item.boardId),
      createdByUserId: optionalStringOf(item, 'createdByUserId') ?? '',
      expiresAt: String(item.expiresAt),
      revokedAt: optionalStringOf(item, 'revokedAt'),
    }));
  }

  async revoke(id: string, revocation: Revocation): Promise<StoredSession | undefined> {
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({ ...this.revocationUpdate(id, revocation), ReturnValues: 'ALL_NEW' }),
        ),
      );
      return Attributes ? toStoredSession(Attributes) : undefined;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      // Revoked before (keep that first revocation), or no such session.
      return this.get(id);
    }
  }

  async listAll(): Promise<StoredSession[]> {
    // Sessions only: the cut-off records in the same table have no token hash.
    const items = await this.scanAll({ FilterExpression: 'attribute_exists(tokenHash)' });
    return items.map(toStoredSession);
  }

  async listAllOfUser(userId: string): Promise<StoredSession[]> {
    const items = await this.scanAll({
      FilterExpression: 'userId = :u',
      ExpressionAttributeValues: { ':u': userId },
    });
    return items.map(toStoredSession);
  }

  /** A conditional update that records the first revocation and never creates an item. */
  private revocationUpdate(id: string, revocation: Revocation) {
    return {
      TableName: this.tableName,
      Key: { id },
      UpdateExpression: 'SET revokedAt = :at, revokedByUserId = :by, revokedByKeyId = :key',
      ConditionExpression: NOT_REVOKED,
      ExpressionAttributeValues: {
        ':at': revocation.revokedAt,
        ':by': revocation.byUserId,
        ':key': revocation.byKeyId,
      },
    };
  }
}

/**
 * A string attribute of the item a refusal carries, which the document client leaves in DynamoDB's
 * attribute-value form (`{ S: "…" }`); a plain string is taken too.
 */
function attributeString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const s = (value as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' ? s : undefined;
}

/** What a scope fixes of every session it holds. */
function subjectOf(scope: SessionScope): Partial<Record<(typeof SUBJECT_ATTRIBUTES)[number], string>> {
  switch (scope.by) {
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
  return scope.by === 'orgUser' || scope.by === 'creatorUser' ? scope.boardId : undefined;
}

/** The index and the scope's key, before sharding, that hold a scope. */
export function scopeKey(scope: SessionScope): { partitionKey: string; value: string } {
  switch (scope.by) {
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

/** SHA-256 of the parts as a JSON array: unambiguous whatever the ids contain, and fixed in length. */
export function compositeKey(kind: string, ...parts: string[]): string {
  return createHash('sha256')
    .update(JSON.stringify([kind, ...parts]))
    .digest('hex');
}

/**
 * The item for a session: metadata as JSON text, the TTL in epoch seconds, the scope index keys; the
 * binding attributes only when set.
 */
export function toItem(session: StoredSession): Item {
  const {
    revokedAt,
    revokedByUserId,
    revokedByKeyId,
    bindToBrowser,
    bindingHash,
    boundAt,
    openedAt,
    ...rest
  } = session;
  return {
    ...rest,
    ...(revokedAt !== null ? { revokedAt, revokedByUserId, revokedByKeyId } : {}),
    // Written only for sessions that bind, so the items of every other session stay as they were.
    ...(bindToBrowser ? { bindToBrowser } : {}),
    ...(bindingHash !== null ? { bindingHash, boundAt } : {}),
    ...(typeof openedAt === 'string' ? { openedAt } : {}),
    metadata: JSON.stringify(session.metadata),
    [TTL_ATTRIBUTE]: Math.ceil(Date.parse(session.expiresAt) / 1000),
    createdKey: `${session.createdAt}#${session.id}`,
    ...scopeShardKeys(session),
  };
}

/** The scope index keys of a session, each in the session's write shard. */
function scopeShardKeys(session: StoredSession): Item {
  const shard = sessionShard(session.id);
  return {
    orgUserShardKey: shardedScopeKey(compositeKey('org-user', session.orgId, session.userId), shard),
    creatorUserShardKey: shardedScopeKey(
      compositeKey('creator-user', session.createdByUserId, session.userId),
      shard,
    ),
    boardShardKey: shardedScopeKey(session.boardId, shard),
    creatorBoardShardKey: shardedScopeKey(
      compositeKey('creator-board', session.createdByUserId, session.boardId),
      shard,
    ),
  };
}

/**
 * A stored session, without the TTL and index attributes, its metadata parsed back into an object.
 * Sessions stored before ownership was recorded read with an empty organization and creator, so no
 * caller reaches them through either rule; sessions stored before tenants were recorded belong to their
 * board's organization, as their subjects were derived then (`legacyTenant`).
 */
export function toStoredSession(item: Item): StoredSession {
  const orgId = optionalStringOf(item, 'orgId') ?? '';
  return {
    id: String(item.id),
    boardId: String(item.boardId),
    orgId,
    tenant: parseTenant(item.tenant) ?? legacyTenant(orgId),
    tokenHash: String(item.tokenHash),
    userId: String(item.userId),
    email: String(item.email),
    firstName: optionalStringOf(item, 'firstName'),
    lastName: optionalStringOf(item, 'lastName'),
    avatarUrl: optionalStringOf(item, 'avatarUrl'),
    plan: optionalStringOf(item, 'plan'),
    metadata: typeof item.metadata === 'string' ? JSON.parse(item.metadata) : {},
    createdAt: String(item.createdAt),
    expiresAt: String(item.expiresAt),
    createdByUserId: optionalStringOf(item, 'createdByUserId') ?? '',
    createdByKeyId: optionalStringOf(item, 'createdByKeyId') ?? '',
    revokedAt: optionalStringOf(item, 'revokedAt'),
    revokedByUserId: optionalStringOf(item, 'revokedByUserId'),
    revokedByKeyId: optionalStringOf(item, 'revokedByKeyId'),
    bindToBrowser: item.bindToBrowser === true,
    bindingHash: optionalStringOf(item, 'bindingHash'),
    boundAt: optionalStringOf(item, 'boundAt'),
    // Only on sessions the embed page has opened, so every other session reads as it always did.
    ...(typeof item.openedAt === 'string' ? { openedAt: item.openedAt } : {}),
  };
}

/** Whether an item of the sessions table is a session (cut-off records share the table). */
export function isSessionItem(item: Item): boolean {
  return typeof item.id === 'string' && !isCutoffItem(item) && typeof item.tokenHash === 'string';
}

/**
 * How many write shards a hot scope's index key is split into (see docs/scale.md, "One very hot board"):
 * one board's creates spread over this many partitions, each taking 1,000 writes a second.
 */
export const SCOPE_WRITE_SHARDS = 16;

/**
 * The shard of a session: the first byte of SHA-256 of its id, modulo the shard count. Fixed for the
 * session's life (it depends on nothing that changes) and even across sessions.
 */
export function sessionShard(sessionId: string, shards: number = SCOPE_WRITE_SHARDS): number {
  return (createHash('sha256').update(sessionId).digest()[0] as number) % shards;
}

/** The index key of one shard of a scope: `<scope key>#<shard>`. */
export function shardedScopeKey(scopeKey: string, shard: number): string {
  return `${scopeKey}#${shard}`;
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
