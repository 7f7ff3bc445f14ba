import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { ROUTES } from '#lib/definitions/routes';
import { resolveResource } from '#local/routing';

// biome-ignore lint/suspicious/noExplicitAny: the document is untyped JSON.
type Json = any;

/** The published document (docs/openapi.json; a unit test keeps it equal to what the code generates). */
export const OPENAPI_DOCUMENT: Json = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'),
);

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(OPENAPI_DOCUMENT, 'openapi');

export interface ObservedResponse {
  method: string;
  /** The request path, with or without a query string. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Asserts that a response the service gave is one the OpenAPI document promises for its route and
 * status: a documented status, a documented media type, a JSON body its schema accepts, and the headers
 * it names (Retry-After). A path the document does not know may only have been answered 404, a method it
 * does not know only 405, both in the error shape.
 */
export function expectDocumentedResponse(response: ObservedResponse): void {
  const label = `${response.method} ${response.path} → ${response.status}`;
  const pathname = new URL(response.path, 'http://local').pathname;
  const resource = resolveResource(ROUTES, pathname);
  const errorSchema = 'openapi#/components/schemas/Error';
  if (!resource) {
    expect(response.status, `${label}: an unknown path`).toBe(404);
    expectJson(response, errorSchema, label);
    return;
  }
  const operation = OPENAPI_DOCUMENT.paths[resource.path]?.[response.method.toLowerCase()];
  if (!operation) {
    expect(response.status, `${label}: a method the path does not have`).toBe(405);
    expectJson(response, errorSchema, label);
    return;
  }
  const documented = operation.responses[String(response.status)];
  expect(documented, `${label}: this status is not in the OpenAPI document`).toBeDefined();
  if (response.status === 304) return;
  // A 204 has no body, and so no media type.
  if (response.status === 204) {
    expect(response.text, `${label}: a body`).toBe('');
    expect(documented.content, `${label}: documented with a body`).toBeUndefined();
    return;
  }
  // A HEAD answer has the headers of the GET it mirrors and no body.
  if (response.method === 'HEAD') {
    expect(response.text, `${label}: a body`).toBe('');
    return;
  }
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  const content = documented.content ?? {};
  expect(Object.keys(content), `${label}: answered ${mediaType}`).toContain(mediaType);
  if (mediaType === 'application/json' && content[mediaType].schema?.$ref) {
    expectJson(response, `openapi${content[mediaType].schema.$ref}`, label);
  }
  if (documented.headers?.['Retry-After'] && response.status >= 429) {
    expect(response.headers.get('retry-after'), `${label}: Retry-After`).toMatch(/^\d+$/);
  }
}

/**
 * Checks a JSON body against the schema at `ref` in the document. Ajv compiles each schema the first
 * time it is named and keeps it under that name; an inline `{ $ref }` object would be a new schema, compiled
 * again, on every response.
 */
function expectJson(response: ObservedResponse, ref: string, label: string): void {
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    throw new Error(`${label}: the body is not JSON: ${response.text.slice(0, 200)}`);
  }
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`${label}: the OpenAPI document has no schema ${ref}`);
  const valid = validate(body);
  expect(valid, `${label}: ${ajv.errorsText(validate.errors)}\n${response.text.slice(0, 500)}`).toBe(true);
}
