import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cfnLint, cfnLintPath } from '#infra/cfn-lint';
import { PROJECT_ROOT } from '#infra/constructs/service-function';
import { useSynthesized } from '#test/support/synthesized';

const executable = cfnLintPath();
// The stack's tests' one synthesis (as `cdk synth` makes it, without bundling); `npm run lint:template`
// lints the app's own in CI's lint step.
const synth = useSynthesized();
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
      templatePath = join(outdir, 'stack.template.json');
      writeFileSync(templatePath, JSON.stringify(synth.template.toJSON()));
    }, 120_000);

    it('finds no error and no warning that is not accepted', () => {
      expect(cfnLint(executable as string, templatePath)).toEqual([]);
    }, 120_000);

    it('reports an error in a broken template, so the check can fail', () => {
      // A template of one table without its key schema: linting the stack's whole template a second
      // time would prove no more and cost as much as the check above.
      const broken = join(outdir, 'broken.template.json');
      writeFileSync(
        broken,
        JSON.stringify({
          AWSTemplateFormatVersion: '2010-09-09',
          Resources: {
            Table: {
              Type: 'AWS::DynamoDB::Table',
              Properties: {
                BillingMode: 'PAY_PER_REQUEST',
                AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
              },
            },
          },
        }),
      );
      const findings = cfnLint(executable as string, broken);
      expect(findings.some((finding) => finding.Level === 'Error' && finding.Rule.Id === 'E3003')).toBe(true);
    }, 120_000);
  },
);
