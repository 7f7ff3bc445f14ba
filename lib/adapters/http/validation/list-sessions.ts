import { ValidationError } from '#lib/domain/errors';
import type { SessionStatus } from '#lib/domain/session';
import { DEFAULT_LIST_LIMIT, type ListSessionsQuery } from '#lib/use-cases/list-sessions';
import { type MultiValueQueryParameters, type QueryParameters, validQueryParameters } from './query-string';
import { validateListSessionsQuery as validate } from './validators.generated.js';

/**
 * Validates the query string of GET /api/embed/sessions: known parameters only, each given once, userId
 * or boardId (or both), a status the API knows, limit 1–100 (default 20). Throws `ValidationError`.
 */
export function parseListSessionsQuery(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
): ListSessionsQuery {
  const params = validQueryParameters(single, multi, validate);
  const { userId, boardId, status, limit, cursor } = params as {
    userId?: string;
    boardId?: string;
    status?: string;
    limit?: number;
    cursor?: string;
  };
  if (userId === undefined && boardId === undefined) {
    throw new ValidationError('userId or boardId is required (or both)');
  }
  const pageSize = limit ?? DEFAULT_LIST_LIMIT;
  return {
    ...(userId !== undefined ? { userId } : {}),
    ...(boardId !== undefined ? { boardId } : {}),
    ...(status !== undefined ? { status: status as SessionStatus } : {}),
    limit: pageSize,
    ...(cursor !== undefined ? { cursor } : {}),
  };
}
