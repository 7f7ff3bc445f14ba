import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { REFERENCE_SCRIPT } from '#lib/adapters/http/api-reference/assets';
import { OPENAPI_PATH } from '#lib/adapters/http/api-reference/build-openapi';
import { GUIDES } from '#lib/adapters/http/api-reference/index-page';
import { REFERENCE_CSP } from '#lib/adapters/http/api-reference/page';
import { openApiAsset, serveReference } from '#lib/adapters/http/api-reference/serve';

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

  it.each([
    'index.html',
    '../../../package.json',
    '..%2Fpackage.json',
    'swagger-ui.js',
    '',
    'favicon-32x32.png',
  ])('answers 404 for %j: only the listed assets exist, and no name reaches the disk', (asset) => {
    const result = get('/docs/{asset}', asset);
    expect(result.statusCode).toBe(404);
    expect(JSON.parse(result.body)).toEqual({
      error: 'Not Found',
      message: 'No such asset of the reference page',
    });
  });

  describe("the page's own script", () => {
    /** Runs reference.js as a browser would at `href`, with the renderer stubbed; what it handed the renderer. */
    async function loadPageAt(href: string) {
      const fetched: string[] = [];
      let onLoad: (() => void) | undefined;
      let resolveConfig: (config: Record<string, unknown>) => void = () => undefined;
      const config = new Promise<Record<string, unknown>>((resolve) => {
        resolveConfig = resolve;
      });
      const window = {
        location: { href },
        addEventListener: (type: string, listener: () => void) => {
          if (type === 'load') onLoad = listener;
        },
        fetch: async (url: string) => {
          fetched.push(url);
          return { ok: true, status: 200, json: async () => JSON.parse(openApiAsset().body) };
        },
        SwaggerUIBundle: (options: Record<string, unknown>) => resolveConfig(options),
      };
      runInNewContext(REFERENCE_SCRIPT, { window, URL, document: {} });
      onLoad?.();
      return { fetched, config: await config };
    }

    it('shows the base URL the page was loaded from, behind any domain and stage, and fetches the document there', async () => {
      const { fetched, config } = await loadPageAt('https://api.example.com/prod/docs?x=1#/Sessions');
      expect(fetched).toEqual(['https://api.example.com/prod/openapi.json']);
      const spec = config.spec as { info: { description: string } };
      expect(spec.info.description).toContain('**Base URL:** `https://api.example.com/prod/`');
      expect(spec.info.description).not.toContain('127.0.0.1');

      const local = await loadPageAt('http://127.0.0.1:4123/docs');
      expect((local.config.spec as { info: { description: string } }).info.description).toContain(
        '`http://127.0.0.1:4123/`',
      );
    });

    it('lists where every guide is', async () => {
      const { config } = await loadPageAt('https://api.example.com/prod/docs');
      const { description } = (config.spec as { info: { description: string } }).info;
      expect(GUIDES.map((guide) => guide.path)).toContain('README.md');
      for (const guide of GUIDES) expect(description).toContain(`- \`${guide.path}\`: ${guide.title}`);
    });

    it('is read-only and hides the controls that only serve "Try it out"', async () => {
      const { config } = await loadPageAt('https://api.example.com/prod/docs');
      expect(config.supportedSubmitMethods).toEqual([]);
      expect(config.validatorUrl).toBeNull();
      type Wrapper = () => () => unknown;
      const [plugin] = config.plugins as [
        () => {
          wrapComponents: Record<string, Wrapper>;
          statePlugins: { spec: { wrapSelectors: Record<string, Wrapper> } };
        },
      ];
      const { wrapComponents, statePlugins } = plugin();
      for (const name of ['ServersContainer', 'AuthorizeBtnContainer', 'authorizeOperationBtn']) {
        expect(wrapComponents[name]?.()()).toBeNull();
      }
      for (const selector of ['servers', 'securityDefinitions']) {
        expect(statePlugins.spec.wrapSelectors[selector]?.()()).toBeNull();
      }
    });
  });
});
