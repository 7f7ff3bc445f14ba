import { ValidationError } from '#lib/domain/errors';
import { describeSchemaErrors } from './describe';
import type { StandaloneValidator } from './validators.generated.js';

export type QueryParameters = Record<string, string | undefined> | null | undefined;
export type MultiValueQueryParameters = Record<string, string[] | undefined> | null | undefined;

/**
 * A query string checked against its schema: each parameter given once, an integer `limit` read from its
 * digits, then the schema's verdict. Returns the parameters; throws `ValidationError`.
 */
export function validQueryParameters(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
  validate: StandaloneValidator,
): Record<string, unknown> {
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
  return params;
}
