import { ValidationError } from '#lib/domain/errors';
import type { CreateSessionRequest } from '#lib/use-cases/create-session';
import { checkAll, describeSchemaErrors } from './describe';
import { checkMetadata, checkWellFormed } from './metadata';
import { validateCreateSession as validate } from './validators.generated.js';

/** Default session lifetime from the spec: 30 days. */
export const DEFAULT_EXPIRES_IN_SECONDS = 2_592_000;

export interface RequestLimits {
  /** Largest serialized metadata accepted, in bytes. */
  metadataMaxBytes: number;
  /**
   * The stage's longest session (its `maxSessionLifetimeSeconds`): a longer `expiresInSeconds` is refused,
   * and a request without one gets the shorter of this and the default. Absent: no limit but year 9999.
   */
  maxSessionLifetimeSeconds?: number;
}

/** The body as the schema admits it: optional fields may be absent or null. */
type RawRequest = Pick<CreateSessionRequest, 'boardId' | 'userId' | 'email'> & {
  [K in Exclude<keyof CreateSessionRequest, 'boardId' | 'userId' | 'email'>]?: CreateSessionRequest[K] | null;
};

const TEXT_FIELDS = ['boardId', 'userId', 'email', 'firstName', 'lastName', 'avatarUrl', 'plan'] as const;

/**
 * Validates a parsed JSON body against the create-session rules and returns the normalized request.
 * Throws `ValidationError` with a message naming every offending field.
 */
export function parseCreateSessionRequest(body: unknown, limits: RequestLimits): CreateSessionRequest {
  if (!validate(body)) throw new ValidationError(describeSchemaErrors(validate.errors));
  const raw = body as RawRequest;
  const metadata = raw.metadata ?? {};
  checkAll([
    ...TEXT_FIELDS.map((field) => () => {
      const value = raw[field];
      if (typeof value === 'string') checkWellFormed(value, field);
    }),
    () => {
      if (typeof raw.avatarUrl === 'string') checkHttpUrl(raw.avatarUrl);
    },
    () => checkMetadata(metadata, limits.metadataMaxBytes),
    () => {
      const max = limits.maxSessionLifetimeSeconds;
      if (max !== undefined && typeof raw.expiresInSeconds === 'number' && raw.expiresInSeconds > max) {
        throw new ValidationError(
          `expiresInSeconds must be at most ${max} on this deployment (its maximum session lifetime), got ${raw.expiresInSeconds}`,
        );
      }
    },
  ]);
  return {
    boardId: raw.boardId,
    userId: raw.userId,
    email: raw.email,
    firstName: raw.firstName ?? null,
    lastName: raw.lastName ?? null,
    avatarUrl: raw.avatarUrl ?? null,
    plan: raw.plan ?? null,
    metadata,
    expiresInSeconds:
      raw.expiresInSeconds ??
      Math.min(DEFAULT_EXPIRES_IN_SECONDS, limits.maxSessionLifetimeSeconds ?? Infinity),
    bindToBrowser: raw.bindToBrowser ?? false,
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
