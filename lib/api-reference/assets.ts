import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTIONS } from '#lib/definitions/routes';

/** A file the reference page loads from this origin. */
export interface ReferenceAsset {
  contentType: string;
  body: string;
  /** Strong validator for conditional requests. */
  etag: string;
}

/**
 * The page's own script: starts the renderer on the document served next to the page. "Try it out" is
 * off (API keys belong on servers, never in a browser), and so is the renderer's default call to an
 * outside validator: the page talks to nothing but this origin.
 */
export const REFERENCE_SCRIPT = `window.addEventListener('load', function () {
  window.SwaggerUIBundle({
    url: new URL('openapi.json', window.location.href).href,
    dom_id: '#reference',
    deepLinking: true,
    supportedSubmitMethods: [],
    validatorUrl: null,
    defaultModelsExpandDepth: 1,
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
