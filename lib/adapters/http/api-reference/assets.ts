import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTIONS } from '#lib/definitions/routes';
import { GUIDES } from './index-page';

/** A file the reference page loads from this origin. */
export interface ReferenceAsset {
  contentType: string;
  body: string;
  /** Strong validator for conditional requests. */
  etag: string;
}

/**
 * The page's own script: fetches the document served next to the page, adds to its description the base
 * URL this page was loaded from (the stage URL in AWS, whatever domain or stage serves it; the runtime's
 * origin locally) and where the guides are, and starts the renderer on it. Read-only: "Try it out" is
 * off (API keys belong on servers, never in a browser), so the controls that only serve it are hidden
 * (the server selector, "Authorize" and the operations' padlocks), and so is the renderer's default call
 * to an outside validator: the page talks to nothing but this origin.
 */
export const REFERENCE_SCRIPT = `window.addEventListener('load', function () {
  var base = new URL('./', window.location.href).href;
  var guides = ${JSON.stringify(GUIDES.map((guide) => `\`${guide.path}\`: ${guide.title}`))};
  var hidden = function () { return function () { return null; }; };
  var readOnly = function () {
    return {
      wrapComponents: { ServersContainer: hidden, AuthorizeBtnContainer: hidden, authorizeOperationBtn: hidden },
      // Without servers or security schemes to offer, the bar that holds those controls is not drawn either.
      statePlugins: { spec: { wrapSelectors: { servers: hidden, securityDefinitions: hidden } } },
    };
  };
  window.fetch(new URL('openapi.json', base).href).then(function (response) {
    if (!response.ok) throw new Error('GET openapi.json answered ' + response.status);
    return response.json();
  }).then(function (spec) {
    spec.info.description += '\\n\\n**Base URL:** \\u0060' + base + '\\u0060 (where this page is served from).' +
      '\\n\\n**Guides**, in the service\\'s repository:\\n\\n' +
      guides.map(function (line) { return '- ' + line; }).join('\\n');
    window.SwaggerUIBundle({
      spec: spec,
      dom_id: '#reference',
      deepLinking: true,
      supportedSubmitMethods: [],
      validatorUrl: null,
      defaultModelsExpandDepth: 1,
      plugins: [readOnly],
    });
  }).catch(function (error) {
    document.getElementById('reference').textContent = 'The API reference could not load: ' + error.message;
  });
});
`;

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The renderer's files (swagger-ui-dist), by file name, as lib/definitions/routes.ts ships them. */
const RENDERER_FILES = new Map((FUNCTIONS.docs.files ?? []).map((path) => [basename(path), path]));
const cache = new Map<string, ReferenceAsset>();

/** The asset with this file name, or undefined for any other name (no path ever reaches the disk). */
export function referenceAsset(name: string): ReferenceAsset | undefined {
  const cached = cache.get(name);
  if (cached) return cached;
  let body: string | undefined;
  if (name === 'reference.js') body = REFERENCE_SCRIPT;
  else {
    const packagePath = RENDERER_FILES.get(name);
    if (packagePath) body = readFileSync(locate(packagePath), 'utf8');
  }
  if (body === undefined) return undefined;
  const extension = name.slice(name.lastIndexOf('.'));
  const asset = {
    contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    body,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  };
  cache.set(name, asset);
  return asset;
}

/**
 * Where a shipped file is: next to the bundle in Lambda (the bundling step copies it there), otherwise
 * in node_modules (the local runtime and the tests run the sources).
 */
function locate(packagePath: string): string {
  const shipped = fileURLToPath(new URL(basename(packagePath), import.meta.url));
  return existsSync(shipped) ? shipped : createRequire(import.meta.url).resolve(packagePath);
}
