import { DEFAULT_WEBHOOK_LIMIT, type ListWebhooksQuery } from '#lib/use-cases/webhooks';
import { type MultiValueQueryParameters, type QueryParameters, validQueryParameters } from './query-string';
import { validateListWebhooksQuery as validate } from './validators.generated.js';

/**
 * Validates the query string of GET /api/embed/webhooks: `limit` 1–100 (default 20) and `cursor`, each
 * given once, nothing else. Throws `ValidationError`.
 */
export function parseListWebhooksQuery(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
): ListWebhooksQuery {
  const { limit, cursor } = validQueryParameters(single, multi, validate) as {
    limit?: number;
    cursor?: string;
  };
  return { limit: limit ?? DEFAULT_WEBHOOK_LIMIT, ...(cursor !== undefined ? { cursor } : {}) };
}
