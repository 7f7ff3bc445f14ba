/**
 * `npm run test:assembly`: synthesizes the stack with `cdk synth` into a temporary cloud assembly, then
 * runs the HTTP integration tests against that assembly served as deployed (test/assembly/runtime.ts):
 * the template's API on the shared API Gateway emulator, each function's asset on Node 24 with the
 * template's environment, DynamoDB Local with the template's tables, every DynamoDB call checked against
 * the caller's IAM statements. Ends with the IAM report: denied calls fail the run; granted actions no
 * call used are listed. Without Java or Node 24 it says why it skips (CI sets NODE24, so there it fails).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WAF_RATE_LIMIT_BOUNDS } from '#lib/definitions/rate-limits';
import { RATE_LIMIT_BOUNDS } from '#lib/domain/api-key';
import { childEnv } from '#test/support/child-env';
import { dynamoDbLocalUnavailable } from '#test/support/dynamodb-local';
import { node24 } from '#test/support/node24';
import type { RecordedCall } from './dynamodb-recorder';
import { unusedGrants } from './iam';
import { uncalledRoutes } from './route-coverage';
import { assemblyApi, assemblyFunctions, Resolver, readCloudAssembly, roleStatements } from './template';

const ROOT = join(import.meta.dirname, '..', '..');

/** The HTTP integration tests the assembly serves, and the assembly runner's own tests. */
export const ASSEMBLY_TEST_FILES = [
  'test/integration/create-session.test.ts',
  'test/integration/session-lifecycle.test.ts',
  'test/integration/embed-page.test.ts',
  'test/integration/idempotency.test.ts',
  'test/integration/embed-script.test.ts',
  'test/integration/client.test.ts',
  'test/integration/provisioning.test.ts',
  'test/assembly/',
];

/**
 * Context for this synthesis on top of cdk.json's: per-key limits at API Gateway's maxima and the embed
 * page's per-client limit at AWS WAF's, so that no test of another rule is throttled (the local fixture does
 * the same); everything else as deployed.
 */
const CONTEXT = {
  apiKeyRateLimit: RATE_LIMIT_BOUNDS.rate.max,
  apiKeyBurstLimit: RATE_LIMIT_BOUNDS.burst.max,
  embedPageRateLimit: WAF_RATE_LIMIT_BOUNDS.max,
};

/** Children get PATH and HOME, and what this script sets on purpose; never this process's environment. */
function baseEnv(): Record<string, string> {
  return childEnv();
}

function main(): number {
  const unavailable = dynamoDbLocalUnavailable();
  const node = node24();
  if (unavailable || !node.path) {
    const reason = unavailable ?? node.missing;
    if (process.env.NODE24 && !node.path) throw new Error(`NODE24 is set but unusable: ${reason}`);
    console.log(`Assembly tests skipped: ${reason}.`);
    return 0;
  }
  const work = mkdtempSync(join(tmpdir(), 'embed-assembly-'));
  try {
    const dir = join(work, 'cdk.out');
    console.log(`Assembly tests: cdk synth into ${dir}`);
    const synth = spawnSync(
      join(ROOT, 'node_modules', '.bin', 'cdk'),
      [
        'synth',
        '--quiet',
        '--output',
        dir,
        ...Object.entries(CONTEXT).flatMap(([key, value]) => ['--context', `${key}=${value}`]),
      ],
      { cwd: ROOT, stdio: 'inherit', env: baseEnv() },
    );
    if (synth.status !== 0) return synth.status ?? 1;

    const reportDir = join(work, 'iam');
    const tests = spawnSync(
      join(ROOT, 'node_modules', '.bin', 'vitest'),
      ['run', ...ASSEMBLY_TEST_FILES, ...process.argv.slice(2)],
      {
        cwd: ROOT,
        stdio: 'inherit',
        env: {
          ...baseEnv(),
          TEST_TARGET: 'assembly',
          TEST_DYNAMODB: 'dynamodb-local',
          ASSEMBLY_DIR: dir,
          ASSEMBLY_REPORT_DIR: reportDir,
          NODE24: node.path,
          ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}),
          ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
        },
      },
    );
    const { denied, uncalled } = report(dir, reportDir);
    if (tests.status !== 0) return tests.status ?? 1;
    return denied > 0 || uncalled.length > 0 ? 1 : 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Prints what IAM saw over the whole run and which routes no test called; answers how many calls IAM
 * would have denied and the routes left uncalled.
 */
function report(dir: string, reportDir: string): { denied: number; uncalled: string[] } {
  let files: string[] = [];
  try {
    files = readdirSync(reportDir).filter((file) => file.endsWith('.json'));
  } catch {
    // No test file wrote a report.
  }
  const calls: RecordedCall[] = [];
  let denied: RecordedCall[] = [];
  const routesCalled = new Set<string>();
  for (const file of files) {
    const one = JSON.parse(readFileSync(join(reportDir, file), 'utf8')) as {
      calls: RecordedCall[];
      denied: RecordedCall[];
      routesCalled?: string[];
    };
    calls.push(...one.calls);
    denied = denied.concat(one.denied);
    for (const route of one.routesCalled ?? []) routesCalled.add(route);
  }
  const assembly = readCloudAssembly(dir);
  const resolver = new Resolver(assembly);
  const uncalled = uncalledRoutes(Object.keys(assemblyApi(assembly, resolver).methods), routesCalled);
  console.log(
    uncalled.length === 0
      ? `\nRoutes: every route of the template was called by an assembly test.`
      : `\nRoutes no assembly test called (each route needs one): ${uncalled.join(', ')}`,
  );
  console.log(`\nIAM, call by call: ${calls.length} DynamoDB calls checked, ${denied.length} denied.`);
  for (const call of denied)
    console.log(`  DENIED ${call.function} ${call.operation} ${JSON.stringify(call.checks)}`);
  console.log('Granted but not used by any call of this run:');
  for (const fn of assemblyFunctions(assembly, resolver)) {
    const allowed = calls
      .filter((call) => call.function === fn.name)
      .flatMap((call) => call.checks.filter((check) => check.decision === 'allow'));
    const unused = unusedGrants(roleStatements(assembly, resolver, fn.roleLogicalId), 'dynamodb', allowed);
    console.log(`  ${fn.logicalId}: ${unused.length === 0 ? 'none' : ''}`);
    for (const grant of unused) console.log(`    ${grant}`);
  }
  return { denied: denied.length, uncalled };
}

process.exit(main());
