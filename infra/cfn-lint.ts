/**
 * `npm run lint:template`: synthesizes the stack offline (as `cdk synth` does, without bundling: the
 * template is the same but for asset hashes) and runs AWS's CloudFormation linter, cfn-lint, on it. Zero
 * errors and zero warnings pass; a warning accepted on purpose is ignored in `.cfnlintrc`, with its reason
 * there and in docs/operations.md. Without cfn-lint on the PATH it says why it skips, and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { PROJECT_ROOT } from './constructs/service-function';
import { defineServiceApp } from './service-app';

/** Where cfn-lint is on the PATH, or undefined. */
export function cfnLintPath(path = process.env.PATH ?? ''): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v cfn-lint'], { encoding: 'utf8', env: { PATH: path } });
  const location = found.stdout.trim();
  return found.status === 0 && location ? location : undefined;
}

/** Synthesizes the service's stack into `outdir` without bundling; returns the template's path. */
export function synthesizeTemplate(outdir: string): string {
  const context = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context;
  const app = new App({ outdir, context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  const stack = defineServiceApp(app);
  app.synth();
  return join(outdir, stack.templateFile);
}

export interface CfnLintFinding {
  Rule: { Id: string };
  Level: string;
  Message: string;
  Location: { Path: (string | number)[] };
}

/**
 * Runs cfn-lint (with the repository's `.cfnlintrc`) on a template; its findings, the ignored rules left
 * out. The child gets PATH and HOME only (cfn-lint needs nothing else).
 */
export function cfnLint(executable: string, templatePath: string): CfnLintFinding[] {
  const result = spawnSync(executable, ['--format', 'json', '--', templatePath], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  if (result.error) throw result.error;
  // Exit codes are a bit mask of the levels found (2 error, 4 warning, 8 informational); 1 is a crash.
  if (result.status === 1 || !result.stdout.trim().startsWith('[')) {
    throw new Error(`cfn-lint failed (exit ${result.status}):\n${result.stderr}${result.stdout}`);
  }
  return JSON.parse(result.stdout) as CfnLintFinding[];
}

function main(): void {
  const executable = cfnLintPath();
  if (!executable) {
    console.log(
      'cfn-lint skipped: cfn-lint is not on the PATH (install it with `pip install cfn-lint` to lint the template).',
    );
    return;
  }
  const outdir = mkdtempSync(join(tmpdir(), 'embed-cfn-lint-'));
  try {
    const findings = cfnLint(executable, synthesizeTemplate(outdir));
    for (const finding of findings) {
      console.log(
        `${finding.Level} ${finding.Rule.Id} ${finding.Location.Path.join('/')}: ${finding.Message}`,
      );
    }
    if (findings.length > 0) {
      console.log(`cfn-lint: ${findings.length} finding(s); fix them, or accept a warning in .cfnlintrc.`);
      process.exitCode = 1;
    } else {
      console.log('cfn-lint: the synthesized template has no errors and no unaccepted warnings.');
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
