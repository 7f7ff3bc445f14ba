import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  createdSessionSchema,
  embedContextSchema,
  otherTenantSessionSchema,
  sessionSchema,
} from '#lib/adapters/http/api-reference/api-schemas';
import { OPENAPI_PATH, openApiFileContent } from '#lib/adapters/http/api-reference/build-openapi';
import { buildOpenApiDocument, routeKey } from '#lib/adapters/http/api-reference/openapi';
import { OPERATIONS } from '#lib/adapters/http/api-reference/operations';
import { embedContext } from '#lib/adapters/http/embed/page';
import { listSessionsQuerySchema } from '#lib/adapters/http/validation/schemas';
import { ROUTES } from '#lib/definitions/routes';
import { toCreatedSessionView, toOtherTenantSessionView, toSessionView } from '#lib/domain/session';
import { storedSession } from '#test/support/fixtures';

// biome-ignore lint/suspicious/noExplicitAny: the document is untyped JSON.
const document = buildOpenApiDocument() as any;
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);

describe('the OpenAPI document', () => {
  it('is checked in exactly as generated (run `npm run build:openapi`)', () => {
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(openApiFileContent());
  });

  it('is OpenAPI 3.1 and describes every route of the route table with its method', () => {
    expect(document.openapi).toBe('3.1.0');
    const described = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual(ROUTES.map(routeKey).sort());
  });

  it('refuses to build with a route that has no description, or a description without a route', () => {
    const extra = [
      ...ROUTES,
      { method: 'GET' as const, path: '/new', function: 'health' as const, auth: 'none' as const },
    ];
    expect(() => buildOpenApiDocument(extra)).toThrow('missing GET /new');
    const { 'GET /health': _health, ...withoutHealth } = OPERATIONS;
    expect(() => buildOpenApiDocument(ROUTES, withoutHealth)).toThrow('missing GET /health');
    expect(() => buildOpenApiDocument(ROUTES.filter((r) => r.path !== '/health'))).toThrow(
      'without a route GET /health',
    );
  });

  it('protects exactly the API-key routes with the bearer scheme, and answers their 401, 429 and 503; the provisioning routes with AWS SigV4', () => {
    for (const route of ROUTES) {
      const operation = document.paths[route.path][route.method.toLowerCase()];
      if (route.auth === 'apiKey') {
        expect(operation.security).toEqual([{ apiKey: [] }]);
        for (const status of ['401', '429', '503']) expect(operation.responses[status]).toBeDefined();
        expect(Object.keys(operation.responses['401'].headers)).toEqual(
          expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
        );
      } else if (route.auth === 'iam') {
        expect(operation.security).toEqual([{ awsSigV4: [] }]);
        for (const status of ['403', '404', '503']) expect(operation.responses[status]).toBeDefined();
      } else {
        expect(operation.security).toEqual([]);
      }
      expect(operation.responses['500'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
    }
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes.awsSigV4).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      'x-amazon-apigateway-authtype': 'awsSigv4',
    });
  });

  it('takes the request schemas the handlers validate with, and the list query parameters from theirs', () => {
    const create = document.paths['/api/embed/sessions'].post;
    expect(create.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CreateSessionRequest',
    });
    expect(document.components.schemas.CreateSessionRequest.required).toEqual(['boardId', 'userId', 'email']);
    const list = document.paths['/api/embed/sessions'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      Object.keys(listSessionsQuerySchema.properties),
    );
  });

  it('documents the Idempotency-Key of create and the answers that go with it', () => {
    const create = document.paths['/api/embed/sessions'].post;
    expect(create.parameters).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '409', '422']));
    expect(Object.keys(create.responses['201'].headers)).toContain('Idempotent-Replayed');
  });

  it('gives every example request body a body its own schema accepts', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const operation of Object.values(
        item as Record<
          string,
          { requestBody?: { content: Record<string, { schema: { $ref: string }; example: unknown }> } }
        >,
      )) {
        const media = operation.requestBody?.content['application/json'];
        if (!media) continue;
        const name = media.schema.$ref.split('/').pop() as string;
        expect(
          ajv.validate(document.components.schemas[name], media.example),
          `${path}: ${ajv.errorsText()}`,
        ).toBe(true);
      }
    }
  });
});

describe('the response schemas describe what the code answers', () => {
  const now = new Date('2026-01-15T00:00:00.000Z');
  const stored = storedSession({
    revokedAt: '2026-01-10T00:00:00.000Z',
    revokedByUserId: 'x',
    revokedByKeyId: 'k',
  });

  it('the session view', () => {
    expect(ajv.validate(sessionSchema, toSessionView(stored, now)), ajv.errorsText()).toBe(true);
    expect(Object.keys(toSessionView(stored, now))).toEqual(sessionSchema.required);
  });

  it('the outline of a session another tenant created', () => {
    const view = toOtherTenantSessionView(stored, now);
    expect(ajv.validate(otherTenantSessionSchema, view), ajv.errorsText()).toBe(true);
    expect(Object.keys(view)).toEqual(otherTenantSessionSchema.required);
    // Either view matches exactly one branch of the envelope's oneOf.
    expect(ajv.validate(sessionSchema, view)).toBe(false);
    expect(ajv.validate(otherTenantSessionSchema, toSessionView(stored, now))).toBe(false);
  });

  it('the created session, token included', () => {
    const view = toCreatedSessionView({ ...stored, revokedAt: null }, 'Q'.repeat(32), now);
    expect(ajv.validate(createdSessionSchema, view), ajv.errorsText()).toBe(true);
    expect(Object.keys(view)).toEqual(createdSessionSchema.required);
  });

  it('the embed page context', () => {
    const { tokenHash: _hash, ...session } = stored;
    const context = embedContext({
      session,
      board: { boardId: 'b', orgId: 'o', visibility: 'PUBLIC', name: 'B' },
    });
    expect(ajv.validate(embedContextSchema, context), ajv.errorsText()).toBe(true);
  });
});
