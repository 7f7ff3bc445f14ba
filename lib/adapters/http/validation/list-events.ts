import type { EventType } from '#lib/domain/events';
import { DEFAULT_EVENT_LIMIT, type ListEventsQuery } from '#lib/use-cases/list-events';
import { type MultiValueQueryParameters, type QueryParameters, validQueryParameters } from './query-string';
import { validateListEventsQuery as validate } from './validators.generated.js';

/**
 * Validates the query string of GET /api/embed/events: known parameters only, each given once, a type
 * the API knows, limit 1–100 (default 20). Throws `ValidationError`.
 */
export function parseListEventsQuery(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
): ListEventsQuery {
  const params = validQueryParameters(single, multi, validate);
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
