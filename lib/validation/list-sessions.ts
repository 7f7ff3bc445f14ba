import { ValidationError } from '#lib/domain/errors';
import type { SessionStatus } from '#lib/domain/session';
import { DEFAULT_LIST_LIMIT, type ListSessionsQuery, MAX_LIST_LIMIT } from '#lib/use-cases/list-sessions';
import { describeSchemaError } from './describe';
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
  const params = { ...(single ?? {}) };
  if (!validate(params))
    throw new ValidationError(describeSchemaError(validate.errors?.[0], 'query parameter'));
  const { userId, boardId, status, limit, cursor } = params as Record<string, string | undefined>;
  if (userId === undefined && boardId === undefined) {
    throw new ValidationError('userId or boardId is required (or both)');
  }
  const pageSize = limit === undefined ? DEFAULT_LIST_LIMIT : Number(limit);
  if (pageSize < 1 || pageSize > MAX_LIST_LIMIT) {
    throw new ValidationError(`limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  }
  return {
    ...(userId !== undefined ? { userId } : {}),
    ...(boardId !== undefined ? { boardId } : {}),
    ...(status !== undefined ? { status: status as SessionStatus } : {}),
    limit: pageSize,
    ...(cursor !== undefined ? { cursor } : {}),
  };
}
