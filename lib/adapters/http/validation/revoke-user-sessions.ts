import { ValidationError } from '#lib/domain/errors';
import type { RevokeUserSessionsCommand } from '#lib/use-cases/revoke-user-sessions';
import { checkAll, describeSchemaErrors } from './describe';
import { checkWellFormed } from './metadata';
import { validateRevokeUserSessions as validate } from './validators.generated.js';

/**
 * Validates the body of POST /api/embed/sessions/revoke with create's strictness: `userId`, `boardId`, or
 * both. Throws `ValidationError`.
 */
export function parseRevokeUserSessionsRequest(body: unknown): RevokeUserSessionsCommand {
  if (!validate(body)) throw new ValidationError(describeSchemaErrors(validate.errors));
  const { userId, boardId } = body as { userId?: string; boardId?: string };
  checkAll([
    () => {
      if (userId !== undefined) checkWellFormed(userId, 'userId');
    },
    () => {
      if (boardId !== undefined) checkWellFormed(boardId, 'boardId');
    },
  ]);
  if (userId !== undefined) return boardId === undefined ? { userId } : { userId, boardId };
  if (boardId !== undefined) return { boardId };
  throw new ValidationError('userId or boardId is required (or both)');
}
