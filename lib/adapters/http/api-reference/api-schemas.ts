/**
 * JSON Schemas of what the API answers. The request schemas live beside their validators
 * (lib/adapters/http/validation/schemas.ts); these describe responses, for the OpenAPI document, the typed client and
 * the tests that check every response against it (a unit test also checks the session view the code
 * builds against `sessionSchema`, so the two cannot drift).
 */
import { EVENT_TYPES, SESSION_EVENT_TYPES } from '#lib/domain/events';
import { SESSION_STATUSES } from '#lib/domain/session';

const timestamp = {
  type: 'string',
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds',
  examples: ['2026-01-01T00:00:00.000Z'],
} as const;
const nullableText = { type: ['string', 'null'] } as const;

/** An object schema with its required properties, allowing no property beyond those it names. */
function closedObject<const Required extends readonly string[], const Properties>(
  required: Required,
  properties: Properties,
) {
  return { type: 'object', additionalProperties: false, required, properties } as const;
}

/** The page's continuation, on every listing. */
const nextCursor = {
  type: ['string', 'null'],
  description: 'Opaque; pass it as `cursor` for the next page. `null` on the last page.',
} as const;

/** The spec's session fields without the token, in the spec's order. */
const sessionFields = {
  id: { type: 'string', format: 'uuid', description: 'Unique session identifier' },
  boardId: { type: 'string', description: 'Board the session belongs to' },
  userId: { type: 'string', description: "External user identifier from the caller's system" },
  email: { type: 'string', format: 'email' },
  firstName: nullableText,
  lastName: nullableText,
  avatarUrl: { type: ['string', 'null'], format: 'uri' },
  plan: nullableText,
  metadata: {
    type: 'object',
    additionalProperties: true,
    description: 'Custom key-value data, exactly as sent; `{}` when none',
  },
  expiresAt: timestamp,
  createdAt: timestamp,
} as const;

/** The session everywhere but in the create response: the spec's fields, its status and revocation time. */
export const sessionSchema = closedObject(
  [...Object.keys(sessionFields), 'status', 'revokedAt', 'bindToBrowser', 'boundAt'],
  {
    ...sessionFields,
    status: {
      type: 'string',
      enum: [...SESSION_STATUSES],
      description: 'revoked when revokedAt is set, otherwise expired from expiresAt on, otherwise active',
    },
    revokedAt: { type: ['string', 'null'], format: 'date-time' },
    bindToBrowser: {
      type: 'boolean',
      description: 'Whether the link works only in the first browser that opens it',
    },
    boundAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When a bindToBrowser link was first opened, and so bound; null until then',
    },
  },
);

/**
 * A session another tenant created on a public board of the caller's organization: the organization sees
 * that it exists, and may revoke it, but none of that tenant's user data.
 */
export const otherTenantSessionSchema = closedObject(
  ['id', 'boardId', 'status', 'createdAt', 'expiresAt', 'revokedAt', 'boundAt', 'createdByAnotherTenant'],
  {
    id: sessionFields.id,
    boardId: sessionFields.boardId,
    status: sessionSchema.properties.status,
    createdAt: timestamp,
    expiresAt: timestamp,
    revokedAt: sessionSchema.properties.revokedAt,
    boundAt: sessionSchema.properties.boundAt,
    createdByAnotherTenant: {
      const: true,
      description:
        "Another tenant (an API key owner outside the board's organization) created this session on the " +
        "organization's public board: its user's data is that tenant's and is left out",
    },
  },
);

/** Either view of a session a caller may access. */
const anySession = {
  oneOf: [{ $ref: '#/components/schemas/Session' }, { $ref: '#/components/schemas/OtherTenantSession' }],
} as const;

const tokenSchema = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{32}$',
  description: 'Session token: 32 URL-safe characters; a credential, shown only in the create response',
} as const;

/** The session in the create response: the view with its token, the only place the token appears. */
const { id, boardId, ...afterBoardId } = sessionSchema.properties;
export const createdSessionSchema = {
  ...sessionSchema,
  required: ['id', 'boardId', 'token', ...sessionSchema.required.slice(2)],
  properties: { id, boardId, token: tokenSchema, ...afterBoardId },
} as const;

export const createSessionResponseSchema = closedObject(['session', 'sessionToken', 'embedUrl'], {
  session: { $ref: '#/components/schemas/CreatedSession' },
  sessionToken: { ...tokenSchema, description: 'Equal to session.token' },
  embedUrl: {
    type: 'string',
    format: 'uri',
    description: '`{base_url}/embed?token=<session token>`, for an iframe or a link',
  },
});

export const sessionEnvelopeSchema = closedObject(['session'], { session: anySession });

export const sessionPageSchema = closedObject(['data', 'nextCursor'], {
  data: { type: 'array', items: anySession },
  nextCursor,
});

/** A session event (docs/events.md): what happened to one of the caller's sessions. */
export const sessionEventSchema = closedObject(['id', 'type', 'occurredAt', 'sequence', 'data'], {
  id: {
    type: 'string',
    pattern: '^evt_[0-9a-f]{32}$',
    description: 'Fixed by the session and the type: the same on every delivery of the event',
  },
  type: { type: 'string', enum: [...SESSION_EVENT_TYPES] },
  occurredAt: timestamp,
  sequence: {
    type: 'integer',
    minimum: 1,
    description: "The event's place among its session's events: increasing in the order they occur",
  },
  data: closedObject(['session', 'actor'], {
    session: { $ref: '#/components/schemas/Session' },
    actor: closedObject(['type'], {
      type: { type: 'string', enum: ['api_key', 'operator', 'board_organization'] },
      keyId: { type: 'string', description: 'The API key, when one of the caller’s keys did it' },
    }),
  }),
});

/** `sessions.revoked` (docs/events.md): one revoke-all call, told once, with the count it answered. */
export const sessionsRevokedEventSchema = closedObject(['id', 'type', 'occurredAt', 'data'], {
  id: {
    type: 'string',
    pattern: '^evt_[0-9a-f]{32}$',
    description: 'Fixed by the revoke-all call: the same on every delivery of the event',
  },
  type: { type: 'string', enum: ['sessions.revoked'] },
  occurredAt: timestamp,
  data: closedObject(['scope', 'cutoff', 'revoked', 'actor'], {
    scope: {
      type: 'object',
      additionalProperties: false,
      description:
        'The selection as the call named it: `{userId}`, `{userId, boardId}` or `{boardId}` (an ' +
        'operator’s can also be `{}`: every session of the stage)',
      properties: { userId: { type: 'string' }, boardId: { type: 'string' } },
    },
    cutoff: {
      ...timestamp,
      description: 'The sessions of the scope created at or before this instant are revoked',
    },
    revoked: {
      type: 'integer',
      minimum: 0,
      description: 'The sessions of the scope that were active at the cut-off, as the call answered',
    },
    actor: closedObject(['type'], {
      type: { type: 'string', enum: ['api_key', 'operator'] },
      keyId: { type: 'string', description: 'The API key that made the call' },
    }),
  }),
});

export const eventPageSchema = closedObject(['data', 'nextCursor'], {
  data: {
    type: 'array',
    items: {
      oneOf: [
        { $ref: '#/components/schemas/SessionEvent' },
        { $ref: '#/components/schemas/SessionsRevokedEvent' },
      ],
    },
  },
  nextCursor,
});

export const revokedCountSchema = closedObject(['revoked'], {
  revoked: { type: 'integer', minimum: 0, description: 'Sessions this call revoked' },
});

/** The one error shape of the whole service, including the errors API Gateway makes itself. */
export const errorSchema = closedObject(['error', 'message'], {
  error: {
    type: 'string',
    description: 'The status name, such as "Bad Request"',
    examples: ['Bad Request'],
  },
  message: {
    type: 'string',
    description: 'What went wrong, naming the field when there is one',
    examples: ['email must be a valid e-mail address'],
  },
});

export const healthSchema = closedObject(['status'], { status: { const: 'ok' } });

/** What the embed page hands to the board's front end (as JSON when asked, or in its JSON island). */
export const embedContextSchema = closedObject(['board', 'session'], {
  board: closedObject(['id', 'name'], { id: { type: 'string' }, name: nullableText }),
  session: closedObject(Object.keys(sessionFields), sessionFields),
});

/** The embed page's JSON for a board with its own application: where to send the user, and the token. */
export const embedHandOffSchema = closedObject(['handoff'], {
  handoff: closedObject(['url', 'idToken'], {
    url: {
      type: 'string',
      format: 'uri',
      description: 'The board application’s URL, to POST `id_token` to',
    },
    idToken: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
      description: 'A JWT (ES256) for the application’s origin; see docs/board-apps.md',
    },
  }),
});

/** The embed page's JSON: the context of the built-in page, or the hand-off to the board's application. */
export const embedPageJsonSchema = {
  oneOf: [{ $ref: '#/components/schemas/EmbedContext' }, { $ref: '#/components/schemas/EmbedHandOff' }],
} as const;

/** The OpenID Connect discovery document (`GET /.well-known/openid-configuration`). */
export const openIdConfigurationSchema = closedObject(
  [
    'issuer',
    'jwks_uri',
    'response_types_supported',
    'subject_types_supported',
    'id_token_signing_alg_values_supported',
    'claims_supported',
    'backchannel_logout_supported',
    'backchannel_logout_session_supported',
  ],
  {
    issuer: {
      type: 'string',
      format: 'uri',
      description: 'The `iss` of every ID token: this service’s base URL',
    },
    jwks_uri: { type: 'string', format: 'uri' },
    response_types_supported: { type: 'array', items: { const: 'id_token' } },
    subject_types_supported: { type: 'array', items: { const: 'pairwise' } },
    id_token_signing_alg_values_supported: { type: 'array', items: { const: 'ES256' } },
    claims_supported: { type: 'array', items: { type: 'string' } },
    backchannel_logout_supported: {
      const: true,
      description: 'A board with a `logoutUrl` is sent OpenID Connect Back-Channel Logout requests',
    },
    backchannel_logout_session_supported: {
      const: true,
      description: 'Every logout token names the session that ended (`sid`, as in the ID token)',
    },
  },
);

/** The public keys that verify ID tokens (`GET /.well-known/jwks.json`). */
export const jwksSchema = closedObject(['keys'], {
  keys: {
    type: 'array',
    items: closedObject(['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use'], {
      kty: { const: 'EC' },
      crv: { const: 'P-256' },
      x: { type: 'string' },
      y: { type: 'string' },
      kid: { type: 'string', description: 'Named by the `kid` header of the tokens this key signs' },
      alg: { const: 'ES256' },
      use: { const: 'sig' },
    }),
  },
});

/** A webhook endpoint as its owner sees it: never its secret. */
export const webhookSchema = closedObject(['id', 'url', 'events', 'description', 'createdAt'], {
  id: { type: 'string', pattern: '^whe_[0-9a-f]{32}$', description: 'The endpoint id' },
  url: { type: 'string', format: 'uri', description: 'Where events are POSTed' },
  events: {
    type: 'array',
    items: { type: 'string', enum: [...EVENT_TYPES] },
    description: 'The event types it receives',
  },
  description: nullableText,
  createdAt: timestamp,
});

export const createdWebhookSchema = closedObject(['webhook', 'secret'], {
  webhook: { $ref: '#/components/schemas/Webhook' },
  secret: {
    type: 'string',
    pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
    description:
      'The signing secret (Standard Webhooks): shown only here. Verify `webhook-signature` with the ' +
      'base64-decoded part after `whsec_`',
  },
});

export const rotatedWebhookSecretSchema = closedObject(['webhook', 'secret', 'previousSecretExpiresAt'], {
  webhook: { $ref: '#/components/schemas/Webhook' },
  secret: {
    type: 'string',
    pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
    description: 'The new signing secret: shown only here. Deliveries are signed with it from now on',
  },
  previousSecretExpiresAt: {
    type: 'string',
    format: 'date-time',
    description:
      'Until when the replaced secret signs too: each delivery until then carries two `v1,` signatures, ' +
      'one per secret, so a receiver holding either verifies it',
  },
});

export const webhookListSchema = closedObject(['data', 'nextCursor'], {
  data: { type: 'array', items: { $ref: '#/components/schemas/Webhook' } },
  nextCursor,
});

/** Who made an operator's change: an IAM principal's ARN, or `cli:<user>` for the admin CLI. */
const operator = {
  type: ['string', 'null'],
  description: 'The IAM principal (ARN) or `cli:<user>` that made it',
} as const;
const outcome = {
  type: 'string',
  enum: ['created', 'updated', 'unchanged'],
  description: '`unchanged`: the state was already as asked, and nothing was written',
} as const;

/** A board as the provisioning API shows it. */
export const provisionedBoardSchema = closedObject(
  ['boardId', 'orgId', 'visibility', 'name', 'embedOrigins', 'appUrl', 'logoutUrl', 'updatedBy', 'updatedAt'],
  {
    boardId: { type: 'string' },
    orgId: { type: 'string' },
    visibility: { type: 'string', enum: ['PUBLIC', 'PRIVATE'] },
    name: nullableText,
    embedOrigins: {
      type: 'array',
      items: { type: 'string' },
      description: 'Empty: the stage default applies',
    },
    appUrl: { type: ['string', 'null'], format: 'uri' },
    logoutUrl: { type: ['string', 'null'], format: 'uri' },
    updatedBy: operator,
    updatedAt: { type: ['string', 'null'], format: 'date-time' },
  },
);

export const provisionedBoardResultSchema = closedObject(['board', 'outcome'], {
  board: { $ref: '#/components/schemas/ProvisionedBoard' },
  outcome,
});

export const provisionedBoardListSchema = closedObject(['data'], {
  data: { type: 'array', items: { $ref: '#/components/schemas/ProvisionedBoard' } },
});

export const deletedBoardSchema = closedObject(['boardId', 'orgId', 'deleted', 'sessionsEndedAt'], {
  boardId: { type: 'string' },
  orgId: { type: 'string' },
  deleted: { const: true },
  sessionsEndedAt: { ...timestamp, description: "The cut-off that ended the board's sessions" },
});

export const memberListSchema = closedObject(['orgId', 'members'], {
  orgId: { type: 'string' },
  members: { type: 'array', items: { type: 'string' }, description: "The members' user ids, sorted" },
});

export const membershipSchema = closedObject(['orgId', 'userId', 'member', 'outcome'], {
  orgId: { type: 'string' },
  userId: { type: 'string' },
  member: { const: true },
  outcome: { ...outcome, enum: ['created', 'unchanged'] },
});

export const removedMemberSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['orgId', 'userId', 'removed'],
  properties: {
    orgId: { type: 'string' },
    userId: { type: 'string' },
    removed: { type: 'boolean', description: '`false`: there was no such membership (a retry, say)' },
    sessionsEndedAt: { ...timestamp, description: 'With `endSessions=true`: the cut-off that ended them' },
  },
} as const;

const apiKeyFields = {
  keyId: { type: 'string', pattern: '^key_[0-9a-f]{24}$' },
  userId: { type: 'string' },
  name: nullableText,
  status: { type: 'string', enum: ['ACTIVE', 'REVOKED'] },
  createdAt: timestamp,
  revokedAt: { type: ['string', 'null'], format: 'date-time' },
  limits: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['rate', 'burst'],
    properties: { rate: { type: 'integer' }, burst: { type: 'integer' } },
  },
  expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'Refused from then on' },
  lastUsedAt: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'Last use, recorded at most once per authorizer cache period (accurate to it)',
  },
  createdBy: {
    type: 'string',
    description: 'Who issued it (absent on keys issued before this was recorded)',
  },
  revokedBy: { type: 'string', description: 'Who revoked it' },
  sessionsEndedAt: { ...timestamp, description: 'With `endSessions`: the cut-off that ended its sessions' },
} as const;

export const apiKeySummarySchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'keyId',
    'userId',
    'name',
    'status',
    'createdAt',
    'revokedAt',
    'limits',
    'expiresAt',
    'lastUsedAt',
  ],
  properties: apiKeyFields,
} as const;

export const apiKeyListSchema = closedObject(['data'], {
  data: { type: 'array', items: { $ref: '#/components/schemas/ApiKeySummary' } },
});

export const createdApiKeySchema = closedObject(['apiKey', 'keyId', 'userId', 'expiresAt'], {
  apiKey: { type: 'string', pattern: '^esk_[A-Za-z0-9_-]{43}$', description: 'The key: shown only here' },
  keyId: apiKeyFields.keyId,
  userId: { type: 'string' },
  expiresAt: apiKeyFields.expiresAt,
});

/** Every response schema, under its name in the OpenAPI document's components. */
export const RESPONSE_SCHEMAS = {
  Session: sessionSchema,
  OtherTenantSession: otherTenantSessionSchema,
  CreatedSession: createdSessionSchema,
  CreateSessionResponse: createSessionResponseSchema,
  SessionEnvelope: sessionEnvelopeSchema,
  SessionPage: sessionPageSchema,
  RevokedCount: revokedCountSchema,
  SessionEvent: sessionEventSchema,
  SessionsRevokedEvent: sessionsRevokedEventSchema,
  EventPage: eventPageSchema,
  Error: errorSchema,
  Health: healthSchema,
  EmbedContext: embedContextSchema,
  EmbedHandOff: embedHandOffSchema,
  EmbedPageJson: embedPageJsonSchema,
  OpenIdConfiguration: openIdConfigurationSchema,
  Jwks: jwksSchema,
  Webhook: webhookSchema,
  CreatedWebhook: createdWebhookSchema,
  RotatedWebhookSecret: rotatedWebhookSecretSchema,
  WebhookList: webhookListSchema,
  ProvisionedBoard: provisionedBoardSchema,
  ProvisionedBoardResult: provisionedBoardResultSchema,
  ProvisionedBoardList: provisionedBoardListSchema,
  DeletedBoard: deletedBoardSchema,
  MemberList: memberListSchema,
  Membership: membershipSchema,
  RemovedMember: removedMemberSchema,
  ApiKeySummary: apiKeySummarySchema,
  ApiKeyList: apiKeyListSchema,
  CreatedApiKey: createdApiKeySchema,
} as const;
