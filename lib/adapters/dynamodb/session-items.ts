import { createHash } from 'node:crypto';
import { TTL_ATTRIBUTE } from '#lib/definitions/tables';
import type { StoredSession } from '#lib/domain/session';
import { legacyTenant, parseTenant } from '#lib/domain/tenant';
import { isCutoffItem } from './cutoff-record-items';
import { cutoffCopyToRecord, READS_CUTOFF_COPY, readsCutoffCopyOf } from './session-cutoff-copy';
import { type Item, optionalStringOf } from './table';

/**
 * A session as an item of the sessions table, and back, with the write-sharded keys of its scope indexes.
 *
 * `metadata` is stored as its JSON text rather than as a native map: the SDK's marshaller silently drops a
 * `__proto__` key and throws on a `constructor` key holding an object, and the customer's data must come
 * back exactly as it was sent. JSON.parse on the way out defines such keys as plain own properties.
 */

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
    [READS_CUTOFF_COPY]: cutoffCopyToRecord(session.id),
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
    ...readsCutoffCopyOf(item),
  };
}

/** Whether an item of the sessions table is a session (cut-off records share the table). */
export function isSessionItem(item: Item): boolean {
  return typeof item.id === 'string' && !isCutoffItem(item) && typeof item.tokenHash === 'string';
}
