/**
 * Writes the OpenAPI document to docs/openapi.json (`npm run build:openapi`), where it can be read and
 * diffed; a unit test fails when the file differs from what lib/adapters/http/api-reference/openapi.ts builds.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from './openapi';

export const OPENAPI_PATH = fileURLToPath(new URL('../../../../docs/openapi.json', import.meta.url));

/** The document exactly as the file holds it. */
export function openApiFileContent(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(OPENAPI_PATH, openApiFileContent());
  console.log(`wrote ${OPENAPI_PATH}`);
}
