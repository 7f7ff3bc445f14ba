import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { REFERENCE_CSP } from '#lib/api-reference/page';
import { openApiAsset, serveReference } from '#lib/api-reference/serve';
import { OPENAPI_PATH } from '#lib/definitions/build-openapi';

const get = (resource: string, asset?: string, headers: Record<string, string> = {}) =>
  serveReference({ resource, headers, pathParameters: asset === undefined ? null : { asset } });

describe('serveReference', () => {
  it('serves the checked-in OpenAPI document, public, cacheable and readable from any origin', () => {
    const result = get('/openapi.json');
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(result.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=300',
      'Access-Control-Allow-Origin': '*',
      ETag: openApiAsset().etag,
    });
  });

  it('answers 304 with no body when the client holds the current ETag', () => {
    const { etag } = openApiAsset();
    const result = get('/openapi.json', undefined, { 'If-None-Match': etag });
    expect(result.statusCode).toBe(304);
    expect(result.body).toBe('');
    expect(get('/openapi.json', undefined, { 'if-none-match': '"stale"' }).statusCode).toBe(200);
  });

  it('serves the reference page with a CSP that allows only this origin and nothing that frames it', () => {
    const result = get('/docs');
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(result.headers?.['Content-Security-Policy']).toBe(REFERENCE_CSP);
    expect(REFERENCE_CSP).toContain("default-src 'none'");
    expect(REFERENCE_CSP).toContain("frame-ancestors 'none'");
    expect(REFERENCE_CSP).not.toMatch(/unsafe|https?:|\*/);
    // Every script and stylesheet it loads is one of its own assets: nothing inline, nothing from a CDN.
    expect(result.body).not.toMatch(/<script>|<style|style="|https?:\/\//);
    const loaded = [...result.body.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, url]) => String(url));
    expect(loaded.filter((url) => !url.startsWith('docs/'))).toEqual(['data:,']);
    for (const url of loaded.filter((u) => u.startsWith('docs/'))) {
      expect(get('/docs/{asset}', url.slice('docs/'.length)).statusCode).toBe(200);
    }
  });

  it('serves the renderer’s files from the installed package, with long caching and their types', () => {
    const require = createRequire(import.meta.url);
    const script = get('/docs/{asset}', 'swagger-ui-bundle.js');
    expect(script.headers?.['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toBe(readFileSync(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'), 'utf8'));
    expect(script.headers?.['Cache-Control']).toBe('public, max-age=86400');
    expect(get('/docs/{asset}', 'swagger-ui.css').headers?.['Content-Type']).toBe('text/css; charset=utf-8');
    const own = get('/docs/{asset}', 'reference.js');
    expect(own.body).toContain('supportedSubmitMethods: []');
    expect(own.body).toContain('validatorUrl: null');
  });

  it.each(['index.html', '../package.json', '..%2Fpackage.json', 'swagger-ui.js', '', 'favicon-32x32.png'])(
    'answers 404 for %j: only the listed assets exist, and no name reaches the disk',
    (asset) => {
      const result = get('/docs/{asset}', asset);
      expect(result.statusCode).toBe(404);
      expect(JSON.parse(result.body)).toEqual({
        error: 'Not Found',
        message: 'No such asset of the reference page',
      });
    },
  );
});
