import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { buildOpenApiDocument } from '#lib/adapters/http/api-reference/openapi';
import { headerValue, jsonError } from '#lib/adapters/http/response';
import { referenceAsset } from './assets';
import { serviceIndexResponse } from './index-page';
import {
  ASSET_MAX_AGE_SECONDS,
  cacheableResponse,
  PAGE_MAX_AGE_SECONDS,
  REFERENCE_CSP,
  REFERENCE_PAGE,
} from './page';

/** Built once per process: the document only changes with a deployment. */
let documentAsset: { contentType: string; body: string; etag: string } | undefined;
const pageAsset = {
  contentType: 'text/html; charset=utf-8',
  body: REFERENCE_PAGE,
  etag: `"${createHash('sha256').update(REFERENCE_PAGE).digest('base64url').slice(0, 27)}"`,
};

/** The OpenAPI document as served: pretty JSON with its strong validator. */
export function openApiAsset() {
  if (!documentAsset) {
    const body = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
    documentAsset = {
      contentType: 'application/json',
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    };
  }
  return documentAsset;
}

/**
 * GET / (where to go next), GET /openapi.json, GET /docs and GET /docs/{asset}: public and cacheable, unlike the API's answers,
 * since none of them carries a credential. The document may be fetched from any origin (editors and
 * client generators read it there).
 */
export function serveReference(
  event: Pick<APIGatewayProxyEvent, 'resource' | 'headers' | 'pathParameters'>,
): APIGatewayProxyResult {
  if (event.resource === '/') return serviceIndexResponse(event.headers);
  const ifNoneMatch = headerValue(event.headers, 'if-none-match');
  if (event.resource === '/openapi.json') {
    return cacheableResponse(ifNoneMatch, openApiAsset(), PAGE_MAX_AGE_SECONDS, {
      'Access-Control-Allow-Origin': '*',
    });
  }
  if (event.resource === '/docs') {
    return cacheableResponse(ifNoneMatch, pageAsset, PAGE_MAX_AGE_SECONDS, {
      'Content-Security-Policy': REFERENCE_CSP,
      'Referrer-Policy': 'no-referrer',
    });
  }
  const asset = referenceAsset(event.pathParameters?.asset ?? '');
  if (!asset) return jsonError(404, 'No such asset of the reference page');
  return cacheableResponse(ifNoneMatch, asset, ASSET_MAX_AGE_SECONDS);
}
