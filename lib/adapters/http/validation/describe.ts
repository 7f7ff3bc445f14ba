import type { ErrorObject } from 'ajv';
import { ValidationError } from '#lib/domain/errors';

const PATTERN_MESSAGES: Record<string, string> = {
  boardId: 'boardId must not be blank',
  userId: 'userId must not be blank',
  email: 'email must be a valid e-mail address',
  avatarUrl: 'avatarUrl must be an absolute http or https URL',
  url: 'url must be an absolute https URL',
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
    case 'minItems':
      return `${field} must not be empty`;
    case 'uniqueItems':
      return `${field} must not list an item twice`;
    case 'pattern':
      return PATTERN_MESSAGES[field] ?? `${field} has an invalid format`;
    default:
      return `${field} is invalid`;
  }
}

/**
 * Every problem ajv found (the validators are built with `allErrors`), one sentence per field (the first
 * ajv reports for it: an empty id is "must not be empty", not also "must not be blank"), in the order
 * found, joined into one message: a caller fixes them all in one round.
 */
export function describeSchemaErrors(
  errors: readonly ErrorObject[] | null | undefined,
  kind: 'field' | 'query parameter' = 'field',
): string {
  if (!errors || errors.length === 0) return describeSchemaError(undefined, kind);
  const byField = new Map<string, string>();
  for (const error of errors) {
    const field = fieldOf(error);
    if (!byField.has(field)) byField.set(field, describeSchemaError(error, kind));
  }
  return joinProblems([...byField.values()]);
}

/** The field an error is about: the missing or unknown property, else the top-level field of its path. */
function fieldOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return String(params.missingProperty);
  if (error.keyword === 'additionalProperties') return String(params.additionalProperty);
  return error.instancePath.slice(1).split('/')[0] || 'body';
}

/** Runs every check and throws one `ValidationError` listing what each refused; returns when all passed. */
export function checkAll(checks: ReadonlyArray<() => void>): void {
  const problems: string[] = [];
  for (const check of checks) {
    try {
      check();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      problems.push(error.message);
    }
  }
  if (problems.length > 0) throw new ValidationError(joinProblems(problems));
}

function joinProblems(problems: readonly string[]): string {
  return problems.join('; ');
}
