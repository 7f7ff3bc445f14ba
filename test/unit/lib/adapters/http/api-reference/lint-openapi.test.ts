import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '#lib/adapters/http/api-reference/build-openapi';
import { lintOpenApi } from '#lib/adapters/http/api-reference/lint-openapi';
import { childEnv } from '#test/support/child-env';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..', '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'lint-openapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** docs/openapi.json without its license and without the operationId of GET /health. */
function brokenDocument(): string {
  const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));
  delete document.info.license;
  delete document.paths['/health'].get.operationId;
  const file = join(dir, 'broken.json');
  writeFileSync(file, JSON.stringify(document, null, 2));
  return file;
}

describe('npm run lint:openapi', () => {
  it('finds nothing wrong with the checked-in document', async () => {
    const { totals } = await lintOpenApi(OPENAPI_PATH);
    expect(totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('reports each rule a document breaks as an error, as recommended-strict makes them', async () => {
    const { problems, totals } = await lintOpenApi(brokenDocument());
    expect(problems.map((problem) => [problem.ruleId, problem.severity]).sort()).toEqual([
      ['info-license', 'error'],
      ['operation-operationId', 'error'],
    ]);
    expect(totals.errors).toBe(2);
  });

  it('exits 1 and names the broken rules for a broken document, with no Node end-of-life banner', async () => {
    const failure = await run(
      process.execPath,
      ['--import', 'tsx', 'lib/adapters/http/api-reference/lint-openapi.ts', brokenDocument()],
      {
        cwd: ROOT,
        env: childEnv(),
      },
    ).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    const output = `${failure?.stdout}${failure?.stderr}`;
    expect(output).toMatch(/error\s+info-license/);
    expect(output).toMatch(/error\s+operation-operationId/);
    expect(output).not.toMatch(/end-of-life|Deprecation/i);
  });

  it('exits 0 for the checked-in document, saying so and nothing else', async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'lib/adapters/http/api-reference/lint-openapi.ts'],
      {
        cwd: ROOT,
        env: childEnv(),
      },
    );
    expect(stdout).toBe('docs/openapi.json: valid (redocly.yaml rules)\n');
    expect(stderr).toBe('');
  });
});
