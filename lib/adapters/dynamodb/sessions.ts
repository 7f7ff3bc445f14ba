import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SESSION_STATE_ATTRIBUTES } from '#lib/definitions/tables';
import { type CutoffRecord, type CutoffScope, cutoffScopesOf, withCutoffs } from '#lib/domain/cutoffs';
import type {
  CountCandidate,
  IndexedState,
  ScopePage,
  ScopePartition,
  SessionPosition,
  SessionRepository,
  SessionScope,
  TokenMatch,
} from '#lib/domain/ports';
import type { Revocation, SessionBinding, StoredSession } from '#lib/domain/session';
import { recordIds, recordsOf } from './cutoff-record-items';
import { dynamoCall } from './errors';
import { cutoffCopyRead } from './session-cutoff-copy';
import { toItem, toStoredSession } from './session-items';
import { queryScope, queryScopeCandidates, scopePartitions } from './session-scopes';
import {
  bindSession,
  markSessionOpened,
  NOT_REVOKED,
  queryTokenIndex,
  unbindSession,
} from './session-tokens';
import { DynamoTable, type Item, optionalStringOf, type TableAccess } from './table';

/**
 * Sessions in DynamoDB, keyed by `id` (the item: session-items.ts), found by token and bound by the embed
 * page (session-tokens.ts), listed and counted through the sharded scope indexes (session-scopes.ts), with
 * the revocation cut-off records that share the table (cutoff-records.ts).
 */
export class DynamoSessionRepository extends DynamoTable implements SessionRepository {
  /** The client and the table name, for the functions of each concern. */
  private get table(): TableAccess {
    return { db: this.db, tableName: this.tableName };
  }

  lookupToken(tokenHash: string): Promise<TokenMatch | undefined> {
    return queryTokenIndex(this.table, tokenHash);
  }

  async getCovered(match: TokenMatch): Promise<StoredSession | undefined> {
    // One copy of each record: the one this session's loads read, so no copy takes them all.
    const byId = recordIds(cutoffScopesOf(match), cutoffCopyRead([match]));
    const items = await this.batchGetAll([{ id: match.id }, ...[...byId.keys()].map((id) => ({ id }))]);
    const item = items.find((candidate) => candidate.id === match.id);
    if (!item) return undefined;
    return withCutoffs(toStoredSession(item), recordsOf(items, byId));
  }

  async readCutoffs(scopes: readonly CutoffScope[]): Promise<CutoffRecord[]> {
    // Copy 0: these reads (a revoke-all's count, a status page) serve sessions known by their index
    // entries, which do not hold the copy a session reads, and copy 0 holds what every version wrote.
    const byId = recordIds(scopes, 0);
    if (byId.size === 0) return [];
    const items = await this.batchGetAll([...byId.keys()].map((id) => ({ id })));
    return recordsOf(items, byId);
  }

  async applyCutoffs(sessions: readonly StoredSession[]): Promise<StoredSession[]> {
    if (sessions.length === 0) return [];
    const byId = recordIds(sessions.flatMap(cutoffScopesOf), cutoffCopyRead(sessions));
    const records = recordsOf(await this.batchGetAll([...byId.keys()].map((id) => ({ id }))), byId);
    return sessions.map((session) => withCutoffs(session, records));
  }

  async get(id: string): Promise<StoredSession | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { id }, ConsistentRead: true })),
    );
    return Item ? toStoredSession(Item) : undefined;
  }

  bind(id: string, binding: SessionBinding): Promise<boolean> {
    return bindSession(this.table, id, binding);
  }

  async markOpened(id: string, openedAt: string): Promise<void> {
    await markSessionOpened(this.table, id, openedAt);
  }

  async unbind(id: string, bindingHash: string): Promise<void> {
    await unbindSession(this.table, id, bindingHash);
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

  scopeCandidates(
    scope: SessionScope,
    at: string,
    options: { exceptOrgs?: readonly string[]; after?: string } = {},
  ): Promise<CountCandidate[]> {
    return queryScopeCandidates(this.table, scope, at, options);
  }

  async getMany(ids: readonly string[]): Promise<StoredSession[]> {
    const items = await this.batchGetAll([...new Set(ids)].map((id) => ({ id })));
    return items.map(toStoredSession);
  }

  queryScope(scope: SessionScope, options: { below?: SessionPosition; limit: number }): Promise<ScopePage> {
    return queryScope(this.table, scope, options);
  }

  scopePartitions(scope: SessionScope): ScopePartition[] {
    return scopePartitions(this.table, scope);
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
