import { ValidationError } from '#lib/domain/errors';
import type { RevokeUserSessionsCommand } from '#lib/use-cases/revoke-user-sessions';
import { checkAll, describeSchemaErrors } from './describe';
import { checkWellFormed } from './metadata';
import { validateRevokeUserSessions as validate } from './validators.generated.js';

/** Validates the body of POST /api/embed/sessions/revoke with create's strictness; throws `ValidationError`. */
export function parseRevokeUserSessionsRequest(body: unknown): RevokeUserSessionsCommand {
  if (!validate(body)) throw new ValidationError(describeSchemaErrors(validate.errors));
  const { userId, boardId } = body as { userId: string; boardId?: string };
  checkAll([
    () => checkWellFormed(userId, 'userId'),
    () => {
      if (boardId !== undefined) checkWellFormed(boardId, 'boardId');
    },
  ]);
  return boardId === undefined ? { userId } : { userId, boardId };
}
