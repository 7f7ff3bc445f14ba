/**
 * `npm run lint:openapi`: lints an OpenAPI document (docs/openapi.json by default) with Redocly's rules
 * as redocly.yaml sets them (`recommended-strict`), prints the problems in Redocly's stylish format and
 * exits 1 when there is any error. Through `@redocly/openapi-core`'s API rather than the Redocly CLI,
 * which prints an end-of-life banner on every run on Node 20, a Node this project supports.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  formatProblems,
  getTotals,
  lint,
  loadConfig,
  type NormalizedProblem,
  type Totals,
} from '@redocly/openapi-core';
import { OPENAPI_PATH } from './build-openapi';

export const REDOCLY_CONFIG = fileURLToPath(new URL('../../../../redocly.yaml', import.meta.url));

/** The problems Redocly finds in `file` under the rules of `configPath`, and their totals. */
export async function lintOpenApi(
  file: string,
  configPath: string = REDOCLY_CONFIG,
): Promise<{ problems: NormalizedProblem[]; totals: Totals }> {
  const config = await loadConfig({ configPath });
  const problems = await lint({ ref: file, config });
  return { problems, totals: getTotals(problems) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2] ?? OPENAPI_PATH;
  const { problems, totals } = await lintOpenApi(file);
  formatProblems(problems, { format: 'stylish', totals, command: 'lint' });
  const name = relative(process.cwd(), file);
  if (totals.errors > 0) {
    console.error(`${name}: ${totals.errors} error(s), ${totals.warnings} warning(s) (redocly.yaml rules)`);
    process.exit(1);
  }
  console.log(
    `${name}: valid (redocly.yaml rules${totals.warnings > 0 ? `, ${totals.warnings} warning(s)` : ''})`,
  );
}
