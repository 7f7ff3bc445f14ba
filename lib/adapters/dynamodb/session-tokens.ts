import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SESSION_TOKEN_INDEX } from '#lib/definitions/tables';
import type { TokenMatch } from '#lib/domain/ports';
import type { SessionBinding } from '#lib/domain/session';
import { dynamoCall } from './errors';
import { READS_CUTOFF_COPY, readsCutoffCopyOf } from './session-cutoff-copy';
import { conditionalWrite, optionalStringOf, type TableAccess } from './table';

/**
 * What the embed page reads and writes of a session besides the item itself: the token-hash index, and
 * the binding and first-opening attributes, each set by one conditional update.
 */

export const NOT_REVOKED = 'attribute_exists(id) AND attribute_not_exists(revokedAt)';
/** Only a session created to bind, not bound and not revoked yet: the first binding wins, once. */
const BINDABLE = `${NOT_REVOKED} AND bindToBrowser = :yes AND attribute_not_exists(bindingHash)`;

/** The session a token hash points to, from the token index (a Query, eventually consistent). */
export async function queryTokenIndex(
  table: TableAccess,
  tokenHash: string,
): Promise<TokenMatch | undefined> {
  const { Items } = await dynamoCall(() =>
    table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: SESSION_TOKEN_INDEX,
        KeyConditionExpression: 'tokenHash = :h',
        ExpressionAttributeValues: { ':h': tokenHash },
        ProjectionExpression: `id, boardId, orgId, userId, createdByUserId, createdByKeyId, ${READS_CUTOFF_COPY}`,
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
        ...readsCutoffCopyOf(item),
      }
    : undefined;
}

/** Binds a session to a browser, once: false when it is bound already, revoked or not created to bind. */
export function bindSession(table: TableAccess, id: string, binding: SessionBinding): Promise<boolean> {
  // The only update the embed page makes: the binding's two attributes, nothing else.
  return updateSession(table, id, 'SET bindingHash = :hash, boundAt = :at', BINDABLE, {
    ':hash': binding.bindingHash,
    ':at': binding.boundAt,
    ':yes': true,
  });
}

/** Records a session's first opening; a later one, or one on a deleted session, changes nothing. */
export async function markSessionOpened(table: TableAccess, id: string, openedAt: string): Promise<void> {
  // Opened already: by another load at the same moment, or by this very write, its answer lost and the
  // SDK retrying it. Either way the first opening is recorded; a session deleted meanwhile needs none.
  // One attribute, set once: the stream carries it as session.opened.
  await updateSession(
    table,
    id,
    'SET openedAt = :at',
    'attribute_exists(id) AND attribute_not_exists(openedAt)',
    {
      ':at': openedAt,
    },
  );
}

/** Undoes a binding that was not confirmed, when it is still this one. */
export async function unbindSession(table: TableAccess, id: string, bindingHash: string): Promise<void> {
  // Not bound with this binding (it never landed, or another load bound it): nothing to undo.
  await updateSession(table, id, 'REMOVE bindingHash, boundAt', 'bindingHash = :hash', {
    ':hash': bindingHash,
  });
}

/** One conditional update of a session: true when written, false when its condition refused it. */
function updateSession(
  table: TableAccess,
  id: string,
  update: string,
  condition: string,
  values: Record<string, unknown>,
): Promise<boolean> {
  return conditionalWrite(
    table.db,
    new UpdateCommand({
      TableName: table.tableName,
      Key: { id },
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeValues: values,
    }),
  );
}
