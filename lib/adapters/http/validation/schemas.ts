import { WEBHOOK_SECRET_OVERLAP_SECONDS } from '#lib/domain/webhook';
/**
 * JSON Schemas of every request the API reads: bodies and query strings. They are compiled ahead of time
 * into `validators.generated.js` (`npm run build:validators`), so no schema is compiled in Lambda at all;
 * a unit test fails when the generated file is stale.
 */

import { EVENT_TYPES } from '#lib/domain/events';
import { MAX_ID_LENGTH } from '#lib/domain/ids';
import { SESSION_STATUSES } from '#lib/domain/session';

/** A board, user or organization id: 1–256 characters, not blank. */
export const idSchema = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, pattern: '\\S' } as const;
const optionalText = { type: ['string', 'null'], maxLength: 256 } as const;

/** Practical e-mail syntax: local part, "@", a dotted domain of letters, digits and hyphens. */
export const EMAIL_PATTERN =
  "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$";

/**
 * An absolute http(s) URL with a host and no whitespace or control character anywhere (browsers would
 * silently strip or re-encode them); `new URL` confirms the rest after the schema passes.
 */
export const HTTP_URL_PATTERN =
  '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\\x00-\\x1f\\x7f/?#]+(?:[/?#][^\\s\\x00-\\x1f\\x7f]*)?$';

/** POST /api/embed/sessions */
export const createSessionSchema = {
  $id: 'create-session-request',
  type: 'object',
  additionalProperties: false,
  required: ['boardId', 'userId', 'email'],
  properties: {
    boardId: idSchema,
    userId: idSchema,
    email: { type: 'string', maxLength: 254, pattern: EMAIL_PATTERN },
    firstName: optionalText,
    lastName: optionalText,
    avatarUrl: { type: ['string', 'null'], maxLength: 2048, pattern: HTTP_URL_PATTERN },
    plan: optionalText,
    metadata: { type: ['object', 'null'], additionalProperties: true },
    expiresInSeconds: { type: ['integer', 'null'], minimum: 1 },
    bindToBrowser: { type: ['boolean', 'null'] },
  },
} as const;

/**
 * POST /api/embed/sessions/revoke: `userId` (on `boardId`, when given), or `boardId` alone; the parser
 * refuses a body with neither, with a message naming both.
 */
export const revokeUserSessionsSchema = {
  $id: 'revoke-user-sessions-request',
  type: 'object',
  additionalProperties: false,
  properties: { userId: idSchema, boardId: idSchema },
} as const;

/** A listing's query: the parameters that select, then the page size and the continuation. */
function listingQuerySchema<const Id extends string, const Selectors>($id: Id, selectors: Selectors) {
  return {
    $id,
    type: 'object',
    additionalProperties: false,
    properties: {
      ...selectors,
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      cursor: { type: 'string', minLength: 1, maxLength: 1024 },
    },
  } as const;
}

/**
 * GET /api/embed/sessions. Query strings hold only text: parseListSessionsQuery turns the digits of an
 * integer-typed parameter into a number before validating, so `limit` is checked as the integer it is.
 */
export const listSessionsQuerySchema = listingQuerySchema('list-sessions-query', {
  userId: idSchema,
  boardId: idSchema,
  status: { type: 'string', enum: [...SESSION_STATUSES] },
});

/** GET /api/embed/events: as the session listing's query, text digits of `limit` made a number first. */
export const listEventsQuerySchema = listingQuerySchema('list-events-query', {
  sessionId: idSchema,
  type: { type: 'string', enum: [...EVENT_TYPES] },
});

/** GET /api/embed/webhooks: a page size and a continuation, nothing that selects. */
export const listWebhooksQuerySchema = listingQuerySchema('list-webhooks-query', {});

/** POST /api/embed/webhooks: where to deliver, which event types (every type when absent), a note. */
export const createWebhookSchema = {
  $id: 'create-webhook-request',
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', maxLength: 2048, pattern: HTTP_URL_PATTERN },
    events: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: [...EVENT_TYPES] },
    },
    description: { type: ['string', 'null'], maxLength: 256 },
  },
} as const;

/** POST /api/embed/webhooks/{id}/rotate-secret: how long the replaced secret keeps signing (optional). */
export const rotateWebhookSecretSchema = {
  $id: 'rotate-webhook-secret-request',
  type: 'object',
  additionalProperties: false,
  properties: {
    overlapSeconds: { type: 'integer', minimum: 0, maximum: WEBHOOK_SECRET_OVERLAP_SECONDS.max },
  },
} as const;

/**
 * PUT /admin/orgs/{orgId}/boards/{boardId}: the board's whole desired state. What is left out is cleared
 * (a name, its own embed origins, application and logout URLs), so a PUT of the same body is a no-op.
 */
export const putBoardSchema = {
  $id: 'put-board-request',
  type: 'object',
  additionalProperties: false,
  required: ['visibility'],
  properties: {
    visibility: { type: 'string', enum: ['PUBLIC', 'PRIVATE'] },
    name: { type: ['string', 'null'], minLength: 1, maxLength: 256 },
    embedOrigins: { type: ['array', 'null'], maxItems: 100, items: { type: 'string', maxLength: 2048 } },
    appUrl: { type: ['string', 'null'], maxLength: 2048, pattern: HTTP_URL_PATTERN },
    logoutUrl: { type: ['string', 'null'], maxLength: 2048, pattern: HTTP_URL_PATTERN },
  },
} as const;

/** POST /admin/api-keys: whose key, a label, an optional expiry in whole days. */
export const createApiKeySchema = {
  $id: 'create-api-key-request',
  type: 'object',
  additionalProperties: false,
  required: ['userId'],
  properties: {
    userId: idSchema,
    name: { type: ['string', 'null'], maxLength: 256 },
    expiresInDays: { type: ['integer', 'null'], minimum: 1, maximum: 3650 },
  },
} as const;

/** POST /admin/api-keys/{keyId}/revoke: whether to end every session the key created too. */
export const revokeApiKeySchema = {
  $id: 'revoke-api-key-request',
  type: 'object',
  additionalProperties: false,
  properties: { endSessions: { type: 'boolean' } },
} as const;

/** GET /admin/api-keys: one user's keys, or every key. */
export const listApiKeysQuerySchema = {
  $id: 'list-api-keys-query',
  type: 'object',
  additionalProperties: false,
  properties: { userId: idSchema },
} as const;

/** DELETE /admin/orgs/{orgId}/members/{userId}: `endSessions=true` ends the member's sessions there too. */
export const removeMemberQuerySchema = {
  $id: 'remove-member-query',
  type: 'object',
  additionalProperties: false,
  properties: { endSessions: { type: 'string', enum: ['true', 'false'] } },
} as const;

/** The export name of each schema's validator in the generated module. */
export const VALIDATORS = {
  validateCreateSession: createSessionSchema,
  validateListSessionsQuery: listSessionsQuerySchema,
  validateRevokeUserSessions: revokeUserSessionsSchema,
  validateListEventsQuery: listEventsQuerySchema,
  validateListWebhooksQuery: listWebhooksQuerySchema,
  validateCreateWebhook: createWebhookSchema,
  validateRotateWebhookSecret: rotateWebhookSecretSchema,
  validatePutBoard: putBoardSchema,
  validateCreateApiKey: createApiKeySchema,
  validateRevokeApiKey: revokeApiKeySchema,
  validateListApiKeysQuery: listApiKeysQuerySchema,
  validateRemoveMemberQuery: removeMemberQuerySchema,
} as const;
