import type { ErrorObject } from 'ajv';
import { ValidationError } from '#lib/domain/errors';
import type { CreateSessionRequest } from '#lib/use-cases/create-session';
import validate from './create-session.validator.generated.js';
import { checkMetadata, checkWellFormed } from './metadata';

/** Default session lifetime from the spec: 30 days. */
export const DEFAULT_EXPIRES_IN_SECONDS = 2_592_000;

export interface RequestLimits {
  /** Largest serialized metadata accepted, in bytes. */
  metadataMaxBytes: number;
}

/** The body as the schema admits it: optional fields may be absent or null. */
type RawRequest = Pick<CreateSessionRequest, 'boardId' | 'userId' | 'email'> & {
  [K in Exclude<keyof CreateSessionRequest, 'boardId' | 'userId' | 'email'>]?: CreateSessionRequest[K] | null;
};

const TEXT_FIELDS = ['boardId', 'userId', 'email', 'firstName', 'lastName', 'avatarUrl', 'plan'] as const;

/**
 * Validates a parsed JSON body against the create-session rules and returns the normalized request.
 * Throws `ValidationError` with a message naming the first offending field.
 */
export function parseCreateSessionRequest(body: unknown, limits: RequestLimits): CreateSessionRequest {
  if (!validate(body)) throw new ValidationError(describe(validate.errors?.[0]));
  const raw = body as RawRequest;
  for (const field of TEXT_FIELDS) {
    const value = raw[field];
    if (typeof value === 'string') checkWellFormed(value, field);
  }
  if (typeof raw.avatarUrl === 'string') checkHttpUrl(raw.avatarUrl);
  const metadata = raw.metadata ?? {};
  checkMetadata(metadata, limits.metadataMaxBytes);
  return {
    boardId: raw.boardId,
    userId: raw.userId,
    email: raw.email,
    firstName: raw.firstName ?? null,
    lastName: raw.lastName ?? null,
    avatarUrl: raw.avatarUrl ?? null,
    plan: raw.plan ?? null,
    metadata,
    expiresInSeconds: raw.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS,
  };
}

function checkHttpUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError('avatarUrl must be an absolute http or https URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new ValidationError('avatarUrl must be an absolute http or https URL');
  }
  // The URL is shown to every viewer of the embed page; a user name or password in it would leak.
  if (url.username !== '' || url.password !== '') {
    throw new ValidationError('avatarUrl must not contain a user name or password');
  }
}

const PATTERN_MESSAGES: Record<string, string> = {
  boardId: 'boardId must not be blank',
  userId: 'userId must not be blank',
  email: 'email must be a valid e-mail address',
  avatarUrl: 'avatarUrl must be an absolute http or https URL',
};

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  'string,null': 'a string or null',
  'object,null': 'a JSON object or null',
  'integer,null': 'an integer',
  object: 'a JSON object',
};

/** Turns ajv's first error into a sentence that names the field and the problem. */
function describe(error: ErrorObject | undefined): string {
  if (!error) return 'Request body is invalid';
  const field = error.instancePath.slice(1).split('/')[0] || 'body';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${String(params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${String(params.additionalProperty)} is not an allowed field`;
    case 'type':
      return `${field} must be ${TYPE_NAMES[String(params.type)] ?? String(params.type)}`;
    case 'minLength':
      return `${field} must not be empty`;
    case 'maxLength':
      return `${field} must be at most ${String(params.limit)} characters`;
    case 'minimum':
      return `${field} must be at least ${String(params.limit)}`;
    case 'pattern':
      return PATTERN_MESSAGES[field] ?? `${field} has an invalid format`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}
