import { ValidationError } from '#lib/domain/errors';
import type { SessionStatus } from '#lib/domain/session';
import { DEFAULT_LIST_LIMIT, type ListSessionsQuery } from '#lib/use-cases/list-sessions';
import { describeSchemaErrors } from './describe';
import { validateListSessionsQuery as validate } from './validators.generated.js';

type QueryParameters = Record<string, string | undefined> | null | undefined;
type MultiValueQueryParameters = Record<string, string[] | undefined> | null | undefined;

/**
 * Validates the query string of GET /api/embed/sessions: known parameters only, each given once, userId
 * or boardId (or both), a status the API knows, limit 1–100 (default 20). Throws `ValidationError`.
 */
export function parseListSessionsQuery(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
): ListSessionsQuery {
  for (const [name, values] of Object.entries(multi ?? {})) {
    if ((values?.length ?? 0) > 1) throw new ValidationError(`${name} must be given once`);
  }
  const params: Record<string, unknown> = { ...(single ?? {}) };
  // Query strings are text: an integer parameter's digits become the number its schema describes.
  if (typeof params.limit === 'string' && /^-?\d{1,15}$/.test(params.limit))
    params.limit = Number(params.limit);
  if (!validate(params)) {
    throw new ValidationError(describeSchemaErrors(validate.errors, 'query parameter'));
  }
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
