/**
 * What each route of lib/definitions/routes.ts means to a developer: its summary, the schemas of what it
 * reads and answers, its statuses. The OpenAPI document (lib/adapters/http/api-reference/openapi.ts) joins these with the
 * route table and the JSON Schemas the handlers validate with; it refuses a route without an entry here,
 * and an entry without a route.
 */

/** A schema of the OpenAPI document's components, by name. */
export type SchemaName =
  | 'CreateSessionRequest'
  | 'RevokeUserSessionsRequest'
  | 'Session'
  | 'CreateSessionResponse'
  | 'SessionEnvelope'
  | 'SessionPage'
  | 'RevokedCount'
  | 'EventPage'
  | 'Error'
  | 'Health'
  | 'EmbedContext'
  | 'EmbedPageJson'
  | 'OpenIdConfiguration'
  | 'Jwks'
  | 'CreateWebhookRequest'
  | 'Webhook'
  | 'CreatedWebhook'
  | 'RotateWebhookSecretRequest'
  | 'RotatedWebhookSecret'
  | 'WebhookList'
  | 'PutBoardRequest'
  | 'CreateApiKeyRequest'
  | 'RevokeApiKeyRequest'
  | 'ProvisionedBoardResult'
  | 'ProvisionedBoardList'
  | 'DeletedBoard'
  | 'MemberList'
  | 'Membership'
  | 'RemovedMember'
  | 'ApiKeySummary'
  | 'ApiKeyList'
  | 'CreatedApiKey';

export interface ResponseDoc {
  description: string;
  /** JSON body schema; absent for a body that is not JSON (an HTML page, a script). */
  schema?: SchemaName;
  /** Non-JSON media types, with a description of the body. */
  media?: Record<string, string>;
  /** Response headers beyond the house ones, by name in the document's components. */
  headers?: readonly string[];
}

export interface QueryParameterDoc {
  name: string;
  description: string;
  required: boolean;
}

export interface OperationDoc {
  operationId: string;
  summary: string;
  description: string;
  tag: 'Sessions' | 'Events' | 'Webhooks' | 'Provisioning' | 'Embed page' | 'Service';
  /** The JSON body; `optional` when the route also takes none. */
  body?: { schema: SchemaName; example: unknown; optional?: true };
  /**
   * The query parameters: the properties of a request schema the handler validates with
   * (lib/adapters/http/validation/schemas.ts), or, for a parameter read without one, its description.
   */
  query?: 'ListSessionsQuery' | 'ListEventsQuery' | 'ListWebhooksQuery' | readonly QueryParameterDoc[];
  /** Create takes an Idempotency-Key (see docs/api.md). */
  idempotent?: boolean;
  responses: Readonly<Record<number, ResponseDoc>>;
}

const ERROR = (description: string, headers?: readonly string[]): ResponseDoc => ({
  description,
  schema: 'Error',
  ...(headers ? { headers } : {}),
});

/**
 * The answers of a route whose 200 carries an `ETag`: the 200 itself, the 304 that answers a matching
 * `If-None-Match`, and any others.
 */
const cacheable = (
  ok: ResponseDoc,
  others: Readonly<Record<number, ResponseDoc>> = {},
): Readonly<Record<number, ResponseDoc>> => ({
  200: ok,
  304: { description: 'Not modified since the `ETag` sent in `If-None-Match`' },
  ...others,
});

/** The embed link's one query parameter. */
const EMBED_TOKEN_QUERY = {
  name: 'token',
  description: 'The session token from `embedUrl` (32 URL-safe characters)',
  required: true,
};

/** Answers every provisioning route (AWS_IAM) can give besides its own. */
export const IAM_ROUTE_ERRORS: Readonly<Record<number, ResponseDoc>> = {
  401: ERROR(
    "The signing principal may not invoke this route (API Gateway's ACCESS_DENIED, which this stage answers as the API key authorizer's refusal)",
  ),
  403: ERROR('The request signature does not verify, or its credentials expired'),
  404: ERROR('No such route, or a request without an AWS signature (API Gateway cannot tell them apart)'),
  503: ERROR('Storage or API Gateway is temporarily unavailable; retry after `Retry-After` seconds', [
    'Retry-After',
  ]),
};

/** Answers every API-key route can give besides its own. */
export const API_KEY_ROUTE_ERRORS: Readonly<Record<number, ResponseDoc>> = {
  401: ERROR(
    'No API key ("Send your API key as `Authorization: Bearer <key>`"), or one that is malformed, unknown or revoked ("The API key is invalid")',
  ),
  429: ERROR('Too many requests for this API key; retry after `Retry-After` seconds', ['Retry-After']),
  503: ERROR('Storage or authorization is temporarily unavailable; retry after `Retry-After` seconds', [
    'Retry-After',
  ]),
};

const NOT_FOUND_SESSION = ERROR(
  'No session with this id that the caller may access (the same answer when none exists)',
);

const SESSION_EXAMPLE_BODY = {
  boardId: 'board_public_demo',
  userId: 'customer-42',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  plan: 'pro',
  metadata: { team: 'analytics' },
  expiresInSeconds: 3600,
};

/** One entry per route, keyed `METHOD /path` as in the route table. */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'POST /api/embed/sessions': {
    operationId: 'createSession',
    summary: 'Create an embed session',
    description:
      'Creates a session that ties one of your users to a board and answers its token and `embedUrl`. ' +
      'The board must be PUBLIC or owned by an organization the API key owner is a member of. ' +
      'Send an `Idempotency-Key` to retry safely: a repeat with the same key and body answers the ' +
      'original response (the same session and token) for 24 hours.',
    tag: 'Sessions',
    body: { schema: 'CreateSessionRequest', example: SESSION_EXAMPLE_BODY },
    idempotent: true,
    responses: {
      201: {
        description: 'The session was created',
        schema: 'CreateSessionResponse',
        headers: ['Idempotent-Replayed'],
      },
      400: ERROR('The body or a header is invalid; the message names the problem'),
      403: ERROR('The board is neither public nor owned by an organization of the key owner'),
      404: ERROR('No board has this id'),
      409: ERROR(
        'A request with this Idempotency-Key is still in progress; retry after `Retry-After` seconds, when its hold on the key ends',
        ['Retry-After'],
      ),
      413: ERROR('The body is larger than the service accepts'),
      415: ERROR('Content-Type is not application/json'),
      422: ERROR('This Idempotency-Key was already used with another body (or another API key)'),
    },
  },
  'GET /api/embed/sessions': {
    operationId: 'listSessions',
    summary: 'List sessions of a user or a board',
    description:
      'One page of the sessions the caller may access, newest first. `userId` or `boardId` (or both) ' +
      'is required. Follow `nextCursor` until it is `null`; a cursor is bound to the caller and the query. ' +
      'With `status`, a page looks at most at 1,000 sessions (200 of those you created on another ' +
      'organization’s board) and reads whole only those it answers: it can hold fewer than `limit` sessions, ' +
      'none even, and still have a cursor.',
    tag: 'Sessions',
    query: 'ListSessionsQuery',
    responses: {
      200: { description: 'A page of sessions', schema: 'SessionPage' },
      400: ERROR('A query parameter is invalid, or the cursor was issued for another query'),
    },
  },
  'GET /api/embed/sessions/{id}': {
    operationId: 'getSession',
    summary: 'Retrieve a session',
    description: 'The session with its status. Never its token.',
    tag: 'Sessions',
    responses: {
      200: { description: 'The session', schema: 'SessionEnvelope' },
      404: NOT_FOUND_SESSION,
    },
  },
  'POST /api/embed/sessions/{id}/revoke': {
    operationId: 'revokeSession',
    summary: 'Revoke a session',
    description:
      'Revokes the session; its embed link is refused from the very next load. Idempotent: revoking ' +
      'again answers the session with its first `revokedAt`. No body is needed.',
    tag: 'Sessions',
    responses: {
      200: { description: 'The session, revoked', schema: 'SessionEnvelope' },
      404: NOT_FOUND_SESSION,
    },
  },
  'POST /api/embed/sessions/revoke': {
    operationId: 'revokeUserSessions',
    summary: "Revoke all of a user's or a board's sessions",
    description:
      'Writes one revocation cut-off: every session of the selection created up to the call is revoked, ' +
      'from the next embed page load on, however many there are. `userId`: the external user’s sessions ' +
      'within the caller’s tenant (on one board, when `boardId` is given too). `boardId` alone: every ' +
      'session on the board, whoever created it, for members of the board’s organization only. Counts the ' +
      'sessions of the selection that were active at the cut-off.',
    tag: 'Sessions',
    body: {
      schema: 'RevokeUserSessionsRequest',
      example: { userId: 'customer-42', boardId: 'board_public_demo' },
    },
    responses: {
      200: { description: 'How many sessions this call revoked', schema: 'RevokedCount' },
      400: ERROR('The body is invalid (neither `userId` nor `boardId`, …); the message names the problem'),
      403: ERROR('`boardId` alone, and the caller is not a member of the board’s organization'),
      404: ERROR('`boardId` alone names no board'),
      413: ERROR('The body is larger than the service accepts'),
      415: ERROR('Content-Type is not application/json'),
    },
  },
  'GET /api/embed/events': {
    operationId: 'listEvents',
    summary: 'List the events of your sessions',
    description:
      'One page of the events of the sessions the caller’s tenant created (with any of its keys), and of ' +
      'its revoke-all calls (`sessions.revoked`, which names no session: narrowing to a `sessionId` leaves ' +
      'them out), newest first, kept 30 days: what a receiver that missed deliveries catches up from. ' +
      'Narrow it to one `sessionId` or one `type`. Follow `nextCursor` until it is `null`; a cursor is bound to the caller ' +
      'and the query. A page narrowed to a type can hold fewer than `limit` events and still have a cursor.',
    tag: 'Events',
    query: 'ListEventsQuery',
    responses: {
      200: { description: 'A page of events', schema: 'EventPage' },
      400: ERROR('A query parameter is invalid, or the cursor was issued for another query'),
    },
  },
  'POST /api/embed/webhooks': {
    operationId: 'createWebhook',
    summary: 'Create a webhook endpoint',
    description:
      'Registers an https URL to receive the events of the sessions you create (every type unless ' +
      '`events` narrows them), signed as Standard Webhooks describes (docs/events.md). The URL must point ' +
      'to the public internet: loopback, private, link-local and other internal addresses and names are ' +
      'refused, in any notation, and checked again at every delivery. A key owner has at most 16 ' +
      'endpoints: the 17th create is a `422` until one is deleted. The answer shows the signing secret ' +
      '(`whsec_…`) once: keep it; no other call shows it. Send an `Idempotency-Key` to retry safely: a ' +
      'repeat answers the same endpoint and secret.',
    tag: 'Webhooks',
    body: {
      schema: 'CreateWebhookRequest',
      example: {
        url: 'https://example.com/webhooks/embed',
        events: ['session.revoked', 'session.expired'],
        description: 'Revocations',
      },
    },
    idempotent: true,
    responses: {
      201: {
        description: 'The endpoint, and its signing secret (shown this once)',
        schema: 'CreatedWebhook',
        headers: ['Idempotent-Replayed'],
      },
      400: ERROR(
        'The body or a header is invalid (a URL that is not https, or not on the public internet, …); the message names it',
      ),
      409: ERROR(
        'A request with this Idempotency-Key is still in progress; retry after `Retry-After` seconds',
        ['Retry-After'],
      ),
      413: ERROR('The body is larger than the service accepts'),
      415: ERROR('Content-Type is not application/json'),
      422: ERROR(
        'The key owner has 16 webhook endpoints already (delete one first), or this Idempotency-Key was already used with another body (or another API key)',
      ),
    },
  },
  'GET /api/embed/webhooks': {
    operationId: 'listWebhooks',
    summary: 'List webhook endpoints',
    description:
      'A page of your webhook endpoints (at most 16 in all), oldest first, without their secrets. Follow ' +
      '`nextCursor` until it is `null`; a cursor is bound to the caller.',
    tag: 'Webhooks',
    query: 'ListWebhooksQuery',
    responses: {
      200: { description: 'A page of your endpoints', schema: 'WebhookList' },
      400: ERROR('A query parameter is invalid, or the cursor was issued to another caller'),
    },
  },
  'DELETE /api/embed/webhooks/{id}': {
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint',
    description:
      'Deletes the endpoint: it receives nothing more, not even retries of earlier events. Safe to retry: ' +
      'deleting an endpoint deleted already (in the last 24 hours) answers `204` again.',
    tag: 'Webhooks',
    responses: {
      204: { description: 'Deleted (now, or by an earlier delete of the same endpoint)' },
      404: ERROR('No webhook endpoint with this id that the caller owns (the same answer when none exists)'),
    },
  },
  'POST /api/embed/webhooks/{id}/rotate-secret': {
    operationId: 'rotateWebhookSecret',
    summary: "Rotate a webhook endpoint's signing secret",
    description:
      'Gives the endpoint a new signing secret and shows it once. The replaced secret keeps signing for ' +
      '`overlapSeconds` (default 86400, a day; at most 604800, a week; 0 stops it at once): until then ' +
      'every delivery carries two signatures in `webhook-signature`, one per secret, so receivers verify ' +
      'with either while they switch; after it only the new secret signs. Rotating again during an ' +
      'overlap ends the older secret at once. Send an `Idempotency-Key` to retry safely: a repeat answers ' +
      'the same secret; without one, a retry rotates again.',
    tag: 'Webhooks',
    body: { schema: 'RotateWebhookSecretRequest', example: { overlapSeconds: 3600 }, optional: true },
    idempotent: true,
    responses: {
      200: {
        description: 'The new signing secret (shown this once), and until when the replaced one signs too',
        schema: 'RotatedWebhookSecret',
        headers: ['Idempotent-Replayed'],
      },
      400: ERROR('The body or a header is invalid (an overlap beyond a week, …); the message names it'),
      404: ERROR('No webhook endpoint with this id that the caller owns (the same answer when none exists)'),
      409: ERROR(
        'A request with this Idempotency-Key, or another rotation of this endpoint, is still in progress; retry after `Retry-After` seconds',
        ['Retry-After'],
      ),
      413: ERROR('The body is larger than the service accepts'),
      415: ERROR('Content-Type is not application/json'),
      422: ERROR('This Idempotency-Key was already used with another body (or another API key)'),
    },
  },
  'GET /admin/orgs/{orgId}/boards': {
    operationId: 'listOrgBoards',
    summary: "List an organization's boards",
    description:
      "The organization's boards, by id (a scan of the boards table: for operators, not request paths).",
    tag: 'Provisioning',
    responses: {
      200: { description: 'The boards', schema: 'ProvisionedBoardList' },
      400: ERROR('An id is invalid'),
    },
  },
  'PUT /admin/orgs/{orgId}/boards/{boardId}': {
    operationId: 'putBoard',
    summary: 'Create or update a board',
    description:
      'Sets the board to exactly this state: what the body leaves out is cleared (its name, its own embed ' +
      'origins, application and logout URLs). The same body again writes nothing (`outcome: unchanged`), so ' +
      'retries converge. A board never changes organization: one of another organization answers 400.',
    tag: 'Provisioning',
    body: {
      schema: 'PutBoardRequest',
      example: {
        visibility: 'PRIVATE',
        name: 'Roadmap',
        embedOrigins: ['https://app.example.com'],
        appUrl: 'https://boards.example.com/open',
      },
    },
    responses: {
      200: { description: 'Updated, or already in this state', schema: 'ProvisionedBoardResult' },
      201: { description: 'Created', schema: 'ProvisionedBoardResult' },
      400: ERROR('The body is invalid, or the board belongs to another organization'),
      413: ERROR('The body is larger than the service accepts'),
      415: ERROR('Content-Type is not application/json'),
    },
  },
  'DELETE /admin/orgs/{orgId}/boards/{boardId}': {
    operationId: 'deleteBoard',
    summary: 'Delete a board and end its sessions',
    description:
      'Ends every session of the board with one cut-off (their links are refused from the next load, and ' +
      'their status reads `revoked`), then deletes the board. A board made again under the same id does ' +
      'not bring them back. A retry after the delete answers 404.',
    tag: 'Provisioning',
    responses: {
      200: { description: 'Deleted; its sessions ended', schema: 'DeletedBoard' },
      404: ERROR('The organization has no board with this id'),
    },
  },
  'GET /admin/orgs/{orgId}/members': {
    operationId: 'listMembers',
    summary: "List an organization's members",
    description: 'The user ids of the members, sorted.',
    tag: 'Provisioning',
    responses: { 200: { description: 'The members', schema: 'MemberList' }, 400: ERROR('An id is invalid') },
  },
  'PUT /admin/orgs/{orgId}/members/{userId}': {
    operationId: 'putMember',
    summary: 'Add a member',
    description: 'Makes the user (a key owner) a member. A member already is not written again.',
    tag: 'Provisioning',
    responses: {
      200: { description: 'A member already', schema: 'Membership' },
      201: { description: 'Added', schema: 'Membership' },
      400: ERROR('An id is invalid, or names an operator (`arn:`, `cli:`)'),
    },
  },
  'DELETE /admin/orgs/{orgId}/members/{userId}': {
    operationId: 'removeMember',
    summary: 'Remove a member',
    description:
      'Removes the membership. With `endSessions=true`, also ends every session the member created on ' +
      "the organization's boards (refused from the next load; its sessions elsewhere are untouched).",
    tag: 'Provisioning',
    query: [
      {
        name: 'endSessions',
        description: "`true` to end the sessions the member created on the organization's boards",
        required: false,
      },
    ],
    responses: {
      200: { description: 'Removed (or there was no membership)', schema: 'RemovedMember' },
      400: ERROR('An id or the query is invalid'),
    },
  },
  'GET /admin/api-keys': {
    operationId: 'listApiKeys',
    summary: 'List API keys',
    description: "Every key, or one user's, without the keys: status, expiry, last use, who issued it.",
    tag: 'Provisioning',
    query: [{ name: 'userId', description: "Only this user's keys", required: false }],
    responses: { 200: { description: 'The keys', schema: 'ApiKeyList' }, 400: ERROR('The query is invalid') },
  },
  'POST /admin/api-keys': {
    operationId: 'createApiKey',
    summary: 'Issue an API key',
    description:
      'Issues a key for the user: the answer shows it once; only its hash is kept. `expiresInDays` makes ' +
      'the authorizer refuse it from then on. Not idempotent: a retry issues another key (list and revoke ' +
      'one whose answer was lost).',
    tag: 'Provisioning',
    body: {
      schema: 'CreateApiKeyRequest',
      example: { userId: 'backend-acme', name: 'production', expiresInDays: 90 },
    },
    responses: {
      201: { description: 'The key (shown this once)', schema: 'CreatedApiKey' },
      400: ERROR('The body is invalid'),
      413: ERROR('The body is larger than the service accepts'),
      415: ERROR('Content-Type is not application/json'),
    },
  },
  'POST /admin/api-keys/{keyId}/revoke': {
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description:
      'Revokes the key (idempotent). With `endSessions: true`, also ends every session the key created, ' +
      "with one cut-off: their links are refused from the next load; other keys' links are untouched.",
    tag: 'Provisioning',
    body: { schema: 'RevokeApiKeyRequest', example: { endSessions: true }, optional: true },
    responses: {
      200: { description: 'The key as it now is', schema: 'ApiKeySummary' },
      400: ERROR('The body is invalid'),
      404: ERROR('No API key has this id'),
      415: ERROR('Content-Type is not application/json'),
    },
  },
  'GET /embed': {
    operationId: 'embedPage',
    summary: 'The embedded board',
    description:
      'The page behind `embedUrl`, for an iframe. HTML by default; JSON (the board and session context) ' +
      'with `Accept: application/json`. The token is the credential: no API key. For a board with an ' +
      'application of its own (`appUrl`), the page POSTs a signed ID token (`id_token`) to it instead, and ' +
      'the JSON is `{"handoff": {"url", "idToken"}}`.',
    tag: 'Embed page',
    query: [EMBED_TOKEN_QUERY],
    responses: {
      200: {
        description: 'The board for the session’s user, or the hand-off to the board’s application',
        schema: 'EmbedPageJson',
        media: { 'text/html': 'The embed page, or the page that hands the user to the board’s application' },
      },
      400: { ...ERROR('The link has no token'), media: { 'text/html': 'An error page' } },
      401: {
        ...ERROR('The token is invalid, or the session expired or was revoked'),
        media: { 'text/html': 'An error page' },
      },
      404: { ...ERROR('The session’s board no longer exists'), media: { 'text/html': 'An error page' } },
      429: {
        ...ERROR(
          'Too many loads from this client address (by default 1,000 in 5 minutes, the stage’s web ACL), ' +
            'or the stage’s own throttle; retry after `Retry-After` seconds',
          ['Retry-After'],
        ),
        media: { 'text/html': 'A short page saying so, from the web ACL' },
      },
      503: { ...ERROR('Temporarily unavailable', ['Retry-After']), media: { 'text/html': 'An error page' } },
    },
  },
  'HEAD /embed': {
    operationId: 'embedPageHead',
    summary: 'The embedded board, headers only',
    description:
      'Answers as `GET /embed` would, with its status and headers but no body, and without side ' +
      'effects: it never binds a `bindToBrowser` link and sets no cookie. Link unfurlers send it.',
    tag: 'Embed page',
    query: [EMBED_TOKEN_QUERY],
    responses: {
      200: { description: 'The link opens (the headers of the page; no body)' },
      400: { description: 'The link has no token' },
      401: { description: 'The token is invalid, or the session expired, was revoked or is bound elsewhere' },
      404: { description: 'The session’s board no longer exists' },
      429: { description: 'Too many loads from this client address', headers: ['Retry-After'] },
      503: { description: 'Temporarily unavailable', headers: ['Retry-After'] },
    },
  },
  'GET /embed/ended': {
    operationId: 'endedView',
    summary: 'The view after a session ended',
    description:
      'Where a board application sends its frame once its session of an embed session ended: one sentence ' +
      'and one action for the end user, in the session’s language and theme, and the `expired` or ' +
      '`revoked` message to the host page, as the built-in page posts them. No token: it shows nothing of ' +
      'the session. Never an error: a missing or unknown value falls back (a neutral view, English, `auto`).',
    tag: 'Embed page',
    query: [
      {
        name: 'reason',
        description: '`expired` or `revoked`; anything else shows the neutral view',
        required: false,
      },
      {
        name: 'locale',
        description: 'A BCP 47 tag: `de`, `fr` and `es` have their own texts, else English',
        required: false,
      },
      { name: 'theme', description: '`light`, `dark` or `auto` (the default)', required: false },
    ],
    responses: {
      200: { description: 'The view', media: { 'text/html': 'The expired, revoked or neutral view' } },
    },
  },
  'GET /embed.js': {
    operationId: 'hostScript',
    summary: 'The host script',
    description:
      'A dependency-free script for the host page: `EmbedSession.mount(target, options)` creates the iframe, ' +
      'sizes it to the board and reports its events. Content-addressed by `?v=`: immutable for a year there.',
    tag: 'Embed page',
    query: [
      {
        name: 'v',
        description: 'The script’s content address, as docs/embedding.md shows it',
        required: false,
      },
    ],
    responses: cacheable({ description: 'The script', media: { 'text/javascript': 'ES2020' } }),
  },
  'GET /.well-known/openid-configuration': {
    operationId: 'openIdConfiguration',
    summary: 'OpenID Connect discovery',
    description:
      'How a board application verifies the ID tokens the embed page hands it: the issuer, the JWKS URL, ' +
      'ES256, pairwise subjects and the claims. Public, cacheable for five minutes, readable from any origin.',
    tag: 'Embed page',
    responses: { 200: { description: 'The discovery document', schema: 'OpenIdConfiguration' } },
  },
  'GET /.well-known/jwks.json': {
    operationId: 'jwks',
    summary: 'ID token signing keys',
    description:
      'The public keys (JWK, P-256) that verify ID tokens, each under the `kid` its tokens name; during a ' +
      'rotation, the next key beside the current one. Public, cacheable for five minutes, any origin.',
    tag: 'Embed page',
    responses: {
      200: { description: 'The JSON Web Key Set', schema: 'Jwks' },
      // Only before an environment first read the keyring: later it publishes the keys it read.
      503: ERROR('The keys cannot be read right now; retry after `Retry-After` seconds (never cached)', [
        'Retry-After',
      ]),
    },
  },
  'GET /embed-board.js': {
    operationId: 'boardScript',
    summary: 'The board application script',
    description:
      'For a board’s own application, shown in the frame after the hand-off: `EmbedBoard.ready(options)` ' +
      'tells the host page the board is shown and reports the page’s height as it changes; given the ' +
      'session’s remaining time (and optionally a watch URL of the application), it ends the page with the ' +
      'session: `expired` or `revoked` to the host, and the frame to `GET /embed/ended`, as ' +
      '`EmbedBoard.ended(reason)` does. Public, cacheable for an hour.',
    tag: 'Embed page',
    responses: { 200: { description: 'The script', media: { 'text/javascript': 'ES2020' } } },
  },
  'GET /health': {
    operationId: 'health',
    summary: 'Liveness',
    description: 'Answers while the service runs; touches no table.',
    tag: 'Service',
    responses: { 200: { description: 'Running', schema: 'Health' } },
  },
  'GET /openapi.json': {
    operationId: 'openApiDocument',
    summary: 'This document',
    description: 'The OpenAPI 3.1 description of the API, generated from the route table and schemas.',
    tag: 'Service',
    responses: cacheable({
      description: 'The OpenAPI document',
      media: { 'application/json': 'OpenAPI 3.1' },
    }),
  },
  'GET /': {
    operationId: 'serviceIndex',
    summary: 'Where to go next',
    description:
      'Links to the reference page, the OpenAPI document, the health check and the guides: HTML when `Accept` names `text/html`, JSON otherwise. Links are relative to the API’s base URL.',
    tag: 'Service',
    responses: {
      200: {
        description: 'The index',
        media: { 'application/json': 'The index', 'text/html': 'The index as a page' },
      },
    },
  },
  'GET /docs': {
    operationId: 'referencePage',
    summary: 'API reference page',
    description: 'A readable reference rendered from this document, served with its assets from this origin.',
    tag: 'Service',
    responses: cacheable({ description: 'The reference page', media: { 'text/html': 'HTML' } }),
  },
  'GET /docs/{asset}': {
    operationId: 'referencePageAsset',
    summary: 'An asset of the reference page',
    description: 'The renderer’s script and stylesheet, and the page’s own script.',
    tag: 'Service',
    responses: cacheable(
      { description: 'The asset', media: { 'text/javascript': 'Script', 'text/css': 'Stylesheet' } },
      {
        404: ERROR('No such asset'),
      },
    ),
  },
};
