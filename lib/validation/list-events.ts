import { ValidationError } from '#lib/domain/errors';
import type { EventType } from '#lib/domain/events';
import { DEFAULT_EVENT_LIMIT, type ListEventsQuery } from '#lib/use-cases/list-events';
import { describeSchemaErrors } from './describe';
import { validateListEventsQuery as validate } from './validators.generated.js';

type QueryParameters = Record<string, string | undefined> | null | undefined;
type MultiValueQueryParameters = Record<string, string[] | undefined> | null | undefined;

/**
 * Validates the query string of GET /api/embed/events: known parameters only, each given once, a type
 * the API knows, limit 1–100 (default 20). Throws `ValidationError`.
 */
export function parseListEventsQuery(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
): ListEventsQuery {
  for (const [name, values] of Object.entries(multi ?? {})) {
    if ((values?.length ?? 0) > 1) throw new ValidationError(`${name} must be given once`);
  }
  const params: Record<string, unknown> = { ...(single ?? {}) };
  if (typeof params.limit === 'string' && /^-?\d{1,15}$/.test(params.limit))
    params.limit = Number(params.limit);
  if (!validate(params)) {
    throw new ValidationError(describeSchemaErrors(validate.errors, 'query parameter'));
  }
  const { sessionId, type, limit, cursor } = params as {
    sessionId?: string;
    type?: string;
    limit?: number;
    cursor?: string;
  };
  return {
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(type !== undefined ? { type: type as EventType } : {}),
    limit: limit ?? DEFAULT_EVENT_LIMIT,
    ...(cursor !== undefined ? { cursor } : {}),
  };
}
