/**
 * The OpenAPI 3.1 document of the API, built from the route table (lib/definitions/routes.ts), the
 * JSON Schemas the handlers validate with (lib/adapters/http/validation/schemas.ts), the response schemas
 * (lib/adapters/http/api-reference/api-schemas.ts) and each route's description (lib/adapters/http/api-reference/operations.ts). Nothing
 * in it is written by hand beside them; `npm run build:openapi` writes it to docs/openapi.json, and a test
 * fails when that file is stale.
 */

import {
  createApiKeySchema,
  createSessionSchema,
  createWebhookSchema,
  listEventsQuerySchema,
  listSessionsQuerySchema,
  listWebhooksQuerySchema,
  putBoardSchema,
  revokeApiKeySchema,
  revokeUserSessionsSchema,
  rotateWebhookSecretSchema,
} from '#lib/adapters/http/validation/schemas';
import { RATE_LIMIT_HEADERS } from '#lib/definitions/rate-limits';
import { ROUTES, type RouteDefinition } from '#lib/definitions/routes';
import { MIN_RETRY_AFTER_SECONDS } from '#lib/domain/retry-after';
import { RESPONSE_SCHEMAS } from './api-schemas';
import {
  API_KEY_ROUTE_ERRORS,
  IAM_ROUTE_ERRORS,
  OPERATIONS,
  type OperationDoc,
  type ResponseDoc,
} from './operations';

export const OPENAPI_VERSION = '3.1.0';
/** The API's version; the path carries none (spec), so it is the document's only version marker. */
export const API_VERSION = '1.0.0';

/** The key of a route in OPERATIONS. */
export function routeKey(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** A request schema as a component: without `$id`, which is the validator's name, not the document's. */
function component(schema: { $id: string } & Record<string, unknown>): Record<string, unknown> {
  const { $id: _id, ...rest } = schema;
  return rest;
}

/** The query schemas the handlers validate with, by the name an operation gives them. */
const QUERY_SCHEMAS = {
  ListSessionsQuery: listSessionsQuerySchema,
  ListEventsQuery: listEventsQuerySchema,
  ListWebhooksQuery: listWebhooksQuerySchema,
};

const REQUEST_SCHEMAS = {
  PutBoardRequest: component(putBoardSchema),
  CreateApiKeyRequest: component(createApiKeySchema),
  RevokeApiKeyRequest: component(revokeApiKeySchema),
  CreateSessionRequest: component(createSessionSchema),
  RevokeUserSessionsRequest: component(revokeUserSessionsSchema),
  CreateWebhookRequest: component(createWebhookSchema),
  RotateWebhookSecretRequest: component(rotateWebhookSecretSchema),
};

/** Headers the document names, shared by every operation that sends or reads them. */
const HEADERS = {
  'Retry-After': {
    description: 'Whole seconds to wait before retrying (rounded up, at least 1)',
    schema: { type: 'integer', minimum: MIN_RETRY_AFTER_SECONDS },
  },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  ...Object.fromEntries(
    Object.values(RATE_LIMIT_HEADERS).map(({ name, description, schema }) => [
      name,
      {
        description: `${description} Sent by the local runtime; API Gateway cannot (see docs/api.md).`,
        schema,
      },
    ]),
  ),
} as const;

const RATE_LIMIT_HEADER_NAMES = Object.values(RATE_LIMIT_HEADERS).map(({ name }) => name);

type Json = Record<string, unknown>;

/** Answers any route can get from the platform itself (lib/adapters/http/gateway-responses.ts). */
const GATEWAY_ERRORS: Readonly<Record<number, ResponseDoc>> = {
  405: { description: 'Another method on this path (with an `Allow` header)', schema: 'Error' },
  413: { description: 'The request is larger than API Gateway or Lambda accept', schema: 'Error' },
  429: {
    description: 'Too many requests; retry after `Retry-After` seconds',
    schema: 'Error',
    headers: ['Retry-After'],
  },
  500: { description: 'An unexpected error; the message shows no internals', schema: 'Error' },
  502: { description: 'The function failed; no internals are shown', schema: 'Error' },
  504: { description: 'The function did not answer in time', schema: 'Error' },
};

/** The whole OpenAPI document. Throws when a route has no description, or a description no route. */
export function buildOpenApiDocument(
  routes: readonly RouteDefinition[] = ROUTES,
  operations: Readonly<Record<string, OperationDoc>> = OPERATIONS,
): Json {
  const keys = new Set(routes.map(routeKey));
  const undocumented = [...keys].filter((key) => !operations[key]);
  const orphans = Object.keys(operations).filter((key) => !keys.has(key));
  if (undocumented.length > 0 || orphans.length > 0) {
    throw new Error(
      `lib/adapters/http/api-reference/operations.ts must describe exactly the routes: missing ${undocumented.join(', ') || 'none'}; ` +
        `without a route ${orphans.join(', ') || 'none'}`,
    );
  }

  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const doc = operations[routeKey(route)] as OperationDoc;
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route, doc) };
  }

  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Embed Session API',
      version: API_VERSION,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      description:
        'A SaaS backend creates embed sessions that tie its users to boards, and manages them: retrieve, ' +
        'list, revoke. Every error is JSON `{"error", "message"}`. Base URL: where this document is served ' +
        'from, without `openapi.json` (the stage URL in AWS; locally, the URL `npm start` prints).',
    },
    servers: [{ url: '/', description: 'This service' }],
    tags: [
      { name: 'Sessions', description: 'Create and manage embed sessions (API key)' },
      { name: 'Events', description: 'What happened to your sessions, to catch up from (API key)' },
      { name: 'Webhooks', description: 'Endpoints that receive session events (API key)' },
      {
        name: 'Provisioning',
        description: "The operator's own backend: organizations' boards, members and API keys (AWS SigV4)",
      },
      { name: 'Embed page', description: 'The page behind embedUrl (session token)' },
      { name: 'Service', description: 'Health and this documentation' },
    ],
    paths,
    components: {
      schemas: { ...REQUEST_SCHEMAS, ...RESPONSE_SCHEMAS },
      headers: HEADERS,
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'API key (esk_…)',
          description:
            '`Authorization: Bearer <API key>`. Keep API keys on servers, never in client-side code.',
        },
        awsSigV4: {
          type: 'apiKey',
          name: 'Authorization',
          in: 'header',
          'x-amazon-apigateway-authtype': 'awsSigv4',
          description:
            'AWS Signature Version 4 (service `execute-api`, the stage region) by an IAM principal allowed ' +
            '`execute-api:Invoke` (the stack output ProvisioningCallerPolicyArn). Locally, the credentials ' +
            '`npm start` prints, region `local`.',
        },
      },
    },
  };
}

function operation(route: RouteDefinition, doc: OperationDoc): Json {
  const protectedRoute = route.auth === 'apiKey';
  const responses: Record<string, ResponseDoc> = {
    ...GATEWAY_ERRORS,
    ...doc.responses,
    ...(protectedRoute ? API_KEY_ROUTE_ERRORS : {}),
    ...(route.auth === 'iam' ? IAM_ROUTE_ERRORS : {}),
  };
  const parameters = [
    ...pathParameters(route.path),
    ...queryParameters(doc),
    ...(doc.idempotent
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description:
              'Makes a retry safe: 1–255 printable ASCII characters; the same key and body within 24 hours ' +
              'answers the original response',
            schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
          },
        ]
      : []),
  ];
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: [doc.tag],
    security: protectedRoute ? [{ apiKey: [] }] : route.auth === 'iam' ? [{ awsSigV4: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body
      ? {
          requestBody: {
            required: doc.body.optional !== true,
            content: {
              'application/json': {
                schema: { $ref: `#/components/schemas/${doc.body.schema}` },
                example: doc.body.example,
              },
            },
          },
        }
      : {}),
    responses: Object.fromEntries(
      Object.entries(responses)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([status, response]) => [status, responseObject(response, protectedRoute)]),
    ),
  };
}

function responseObject(response: ResponseDoc, protectedRoute: boolean): Json {
  const headers = [...(response.headers ?? []), ...(protectedRoute ? RATE_LIMIT_HEADER_NAMES : [])];
  const content: Record<string, Json> = {};
  if (response.schema)
    content['application/json'] = { schema: { $ref: `#/components/schemas/${response.schema}` } };
  for (const [type, description] of Object.entries(response.media ?? {})) {
    content[type] = { schema: { type: 'string', description } };
  }
  return {
    description: response.description,
    ...(headers.length > 0
      ? {
          headers: Object.fromEntries(
            headers.map((name) => [name, { $ref: `#/components/headers/${name}` }]),
          ),
        }
      : {}),
    ...(Object.keys(content).length > 0 ? { content } : {}),
  };
}

function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    description:
      name !== 'id'
        ? 'The asset’s file name'
        : path.startsWith('/api/embed/webhooks')
          ? 'The webhook endpoint id (`whe_…`)'
          : 'The session id (a UUID)',
    schema: { type: 'string' },
  }));
}

function queryParameters(doc: OperationDoc): Json[] {
  if (doc.query === undefined) return [];
  if (typeof doc.query === 'string') {
    const schema = QUERY_SCHEMAS[doc.query];
    return Object.entries(schema.properties).map(([name, schema]) => ({
      name,
      in: 'query',
      required: false,
      schema,
    }));
  }
  return doc.query.map(({ name, description, required }) => ({
    name,
    in: 'query',
    required,
    description,
    schema: { type: 'string' },
  }));
}
