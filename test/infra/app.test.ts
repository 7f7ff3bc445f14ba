import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/constructs/service-function';
import { childEnv } from '#test/support/child-env';
import { CDK_JSON_CONTEXT } from '#test/support/infra';

const run = promisify(execFile);
const TSX = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');
const outdirs: string[] = [];

/**
 * Runs infra/app.ts the way `cdk synth` does (context in CDK_CONTEXT_JSON, output in CDK_OUTDIR), with
 * no AWS credentials or region in the environment.
 */
async function runApp(context: Record<string, unknown>) {
  const outdir = mkdtempSync(join(tmpdir(), 'embed-app-'));
  outdirs.push(outdir);
  try {
    await run(TSX, ['infra/app.ts'], {
      cwd: PROJECT_ROOT,
      // Bundling is proven in functions.test.ts; skipping it here keeps this test to the app wiring.
      env: childEnv({
        CDK_CONTEXT_JSON: JSON.stringify({ ...context, 'aws:cdk:bundling-stacks': [] }),
        CDK_OUTDIR: outdir,
      }),
    });
    return { ok: true as const, outdir };
  } catch (error) {
    return { ok: false as const, outdir, stderr: String((error as { stderr?: string }).stderr) };
  }
}

afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

describe('the CDK app entry (infra/app.ts)', () => {
  it('synthesizes the stage stack from cdk.json without credentials, passing cdk-nag', async () => {
    const result = await runApp(CDK_JSON_CONTEXT);
    expect(result).toMatchObject({ ok: true });
    const manifest = JSON.parse(readFileSync(join(result.outdir, 'manifest.json'), 'utf8'));
    const stack = manifest.artifacts['EmbedSessionService-prod'];
    // Environment-agnostic: no account or region was looked up.
    expect(stack.environment).toBe('aws://unknown-account/unknown-region');
    const template = JSON.parse(
      readFileSync(join(result.outdir, 'EmbedSessionService-prod.template.json'), 'utf8'),
    );
    expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
    // CDK's own CloudFormation validation ran, as under `cdk synth`, and found nothing.
    const report = JSON.parse(readFileSync(join(result.outdir, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports.flatMap((plugin: { violations: unknown[] }) => plugin.violations)).toEqual(
      [],
    );
  });

  it('fails synthesis on a resource CloudFormation would reject, as cdk.json turns validation findings into errors', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'embed-app-'));
    outdirs.push(outdir);
    const app = new App({ outdir, context: CDK_JSON_CONTEXT });
    new CfnResource(new Stack(app, 'Invalid'), 'Bucket', {
      type: 'AWS::S3::Bucket',
      properties: { NotAProperty: true },
    });
    expect(() => app.synth()).toThrow();
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
    expect(
      report.pluginReports.flatMap((plugin: { violations: { severity: string }[] }) => plugin.violations),
    ).toEqual([
      expect.objectContaining({ severity: 'error', description: expect.stringContaining('NotAProperty') }),
    ]);
  });

  it('fails synthesis with a clear message on an invalid context value', async () => {
    const result = await runApp({ ...CDK_JSON_CONTEXT, authorizerCacheTtlSeconds: 7200 });
    expect(result.ok).toBe(false);
    const stderr = result.ok ? '' : result.stderr;
    expect(stderr).toContain(
      'Invalid CDK context: authorizerCacheTtlSeconds must be an integer from 0 to 3600, got "7200"',
    );
    // The message alone: no stack trace of the app's code under it.
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stderr).not.toContain('InfraConfigError');
  });
});
