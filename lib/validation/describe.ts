import type { ErrorObject } from 'ajv';

const PATTERN_MESSAGES: Record<string, string> = {
  boardId: 'boardId must not be blank',
  userId: 'userId must not be blank',
  email: 'email must be a valid e-mail address',
  avatarUrl: 'avatarUrl must be an absolute http or https URL',
  limit: 'limit must be an integer from 1 to 100',
};

/** One message for every way a bounded integer can be wrong (not one, too small, too large). */
const RANGE_MESSAGES: Record<string, string> = {
  limit: 'limit must be an integer from 1 to 100',
};

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  'string,null': 'a string or null',
  'object,null': 'a JSON object or null',
  'integer,null': 'an integer',
  'boolean,null': 'true or false',
  object: 'a JSON object',
};

/**
 * Turns ajv's first error into a sentence that names the field and the problem. `kind` names what an
 * unknown property is: a body field or a query parameter.
 */
export function describeSchemaError(
  error: ErrorObject | undefined,
  kind: 'field' | 'query parameter' = 'field',
): string {
  if (!error) return kind === 'field' ? 'Request body is invalid' : 'Query string is invalid';
  const field = error.instancePath.slice(1).split('/')[0] || 'body';
  const params = error.params as Record<string, unknown>;
  const range = RANGE_MESSAGES[field];
  if (range && ['type', 'minimum', 'maximum'].includes(error.keyword)) return range;
  switch (error.keyword) {
    case 'required':
      return `${String(params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${String(params.additionalProperty)} is not an allowed ${kind}`;
    case 'type':
      return `${field} must be ${TYPE_NAMES[String(params.type)] ?? String(params.type)}`;
    case 'minLength':
      return `${field} must not be empty`;
    case 'maxLength':
      return `${field} must be at most ${String(params.limit)} characters`;
    case 'minimum':
      return `${field} must be at least ${String(params.limit)}`;
    case 'maximum':
      return `${field} must be at most ${String(params.limit)}`;
    case 'enum':
      return `${field} must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return PATTERN_MESSAGES[field] ?? `${field} has an invalid format`;
    default:
      return `${field} is invalid`;
  }
}
