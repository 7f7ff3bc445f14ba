import { ValidationError } from '#lib/domain/errors';
import type { BoardInput } from '#lib/use-cases/admin';
import { describeSchemaErrors } from './describe';
import { checkWellFormed } from './metadata';
import { type MultiValueQueryParameters, type QueryParameters, validQueryParameters } from './query-string';
import {
  validateCreateApiKey,
  validateListApiKeysQuery,
  validatePutBoard,
  validateRemoveMemberQuery,
  validateRevokeApiKey,
} from './validators.generated.js';

function valid<T>(body: unknown, validate: typeof validatePutBoard): T {
  if (!validate(body)) throw new ValidationError(describeSchemaErrors(validate.errors));
  return body as T;
}

/**
 * The body of PUT /admin/orgs/{orgId}/boards/{boardId} as the board's whole state: a field left out (or
 * null) is cleared, so that the same body twice describes the same board.
 */
export function parsePutBoardRequest(
  body: unknown,
  ids: { orgId: string; boardId: string },
): Required<Omit<BoardInput, 'embedOrigins' | 'appUrl' | 'logoutUrl'>> &
  Pick<BoardInput, 'embedOrigins' | 'appUrl' | 'logoutUrl'> {
  const raw = valid<{
    visibility: string;
    name?: string | null;
    embedOrigins?: string[] | null;
    appUrl?: string | null;
    logoutUrl?: string | null;
  }>(body, validatePutBoard);
  if (raw.name) checkWellFormed(raw.name, 'name');
  return {
    boardId: ids.boardId,
    orgId: ids.orgId,
    visibility: raw.visibility,
    name: raw.name ?? null,
    embedOrigins: raw.embedOrigins ?? null,
    appUrl: raw.appUrl ?? null,
    logoutUrl: raw.logoutUrl ?? null,
  };
}

/** The body of POST /admin/api-keys. */
export function parseCreateApiKeyRequest(body: unknown): {
  userId: string;
  name: string | null;
  expiresInDays?: number;
} {
  const raw = valid<{ userId: string; name?: string | null; expiresInDays?: number | null }>(
    body,
    validateCreateApiKey,
  );
  checkWellFormed(raw.userId, 'userId');
  if (raw.name) checkWellFormed(raw.name, 'name');
  return {
    userId: raw.userId,
    name: raw.name ?? null,
    ...(typeof raw.expiresInDays === 'number' ? { expiresInDays: raw.expiresInDays } : {}),
  };
}

/** The body of POST /admin/api-keys/{keyId}/revoke; an empty body revokes the key alone. */
export function parseRevokeApiKeyRequest(body: unknown): { endSessions: boolean } {
  return {
    endSessions: valid<{ endSessions?: boolean }>(body ?? {}, validateRevokeApiKey).endSessions === true,
  };
}

/** The query of GET /admin/api-keys. */
export function parseListApiKeysQuery(single: QueryParameters, multi: MultiValueQueryParameters) {
  return validQueryParameters(single, multi, validateListApiKeysQuery) as { userId?: string };
}

/** The query of DELETE /admin/orgs/{orgId}/members/{userId}. */
export function parseRemoveMemberQuery(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
): { endSessions: boolean } {
  const params = validQueryParameters(single, multi, validateRemoveMemberQuery) as { endSessions?: string };
  return { endSessions: params.endSessions === 'true' };
}
