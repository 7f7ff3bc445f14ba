import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cfnLint, cfnLintPath, synthesizeTemplate } from '#infra/cfn-lint';
import { PROJECT_ROOT } from '#infra/constructs/service-function';

const executable = cfnLintPath();
const outdir = mkdtempSync(join(tmpdir(), 'embed-cfn-lint-test-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** The rules `.cfnlintrc` ignores. */
function ignoredRules(): string[] {
  const text = readFileSync(join(PROJECT_ROOT, '.cfnlintrc'), 'utf8');
  return [...text.matchAll(/^\s*-\s*([EWI]\d{4})\s*$/gm)].map((match) => match[1] as string);
}

describe('accepted cfn-lint warnings', () => {
  it('are warnings only, each with its reason in .cfnlintrc and in docs/operations.md', () => {
    const config = readFileSync(join(PROJECT_ROOT, '.cfnlintrc'), 'utf8');
    const operations = readFileSync(join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
    const rules = ignoredRules();
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      // An error is never accepted: only W rules may be ignored.
      expect(rule).toMatch(/^W/);
      expect(config).toMatch(new RegExp(`#\\s*${rule}\\b.{20,}`));
      expect(operations).toMatch(new RegExp(`\`${rule}\`.{20,}`));
    }
  });
});

describe.skipIf(!executable)(
  executable
    ? 'cfn-lint on the synthesized template'
    : 'cfn-lint (skipped: not on the PATH; pip install cfn-lint)',
  () => {
    let templatePath: string;
    beforeAll(() => {
      templatePath = synthesizeTemplate(join(outdir, 'stack'));
    }, 120_000);

    it('finds no error and no warning that is not accepted', () => {
      expect(cfnLint(executable as string, templatePath)).toEqual([]);
    }, 120_000);

    it('reports an error in a broken copy of the template, so the check can fail', () => {
      const template = JSON.parse(readFileSync(templatePath, 'utf8'));
      const [tableId] = Object.entries(template.Resources).find(
        ([, resource]) => (resource as { Type: string }).Type === 'AWS::DynamoDB::Table',
      ) as [string, unknown];
      delete template.Resources[tableId].Properties.KeySchema;
      const broken = join(outdir, 'broken.template.json');
      writeFileSync(broken, JSON.stringify(template));
      const findings = cfnLint(executable as string, broken);
      expect(findings.some((finding) => finding.Level === 'Error')).toBe(true);
    }, 120_000);
  },
);
