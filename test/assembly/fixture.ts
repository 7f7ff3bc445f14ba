import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { node24 } from '#test/support/node24';
import { type AssemblyRuntime, type AssemblyRuntimeOptions, startAssemblyRuntime } from './runtime';

/** The cloud assembly `npm run test:assembly` synthesized for this run (ASSEMBLY_DIR). */
export function assemblyDir(): string {
  const dir = process.env.ASSEMBLY_DIR;
  if (!dir) throw new Error('ASSEMBLY_DIR is not set: run these tests with `npm run test:assembly`');
  return dir;
}

/** Node 24 to run the assets on; the assembly runner cannot work without it. */
export function node24Path(): string {
  const found = node24();
  if (!found.path) throw new Error(`the assembly runner needs Node 24: ${found.missing}`);
  return found.path;
}

/**
 * The assembly runner for one test file, on a DynamoDB Local of its own. On close it writes what IAM saw
 * (ASSEMBLY_REPORT_DIR, read by `npm run test:assembly` for the run's report) and fails when any call was
 * denied, so a missing grant fails the file that exercised it.
 */
export async function startAssemblyTestRuntime(
  options: Partial<AssemblyRuntimeOptions> = {},
  /** `report: false` for a test's deliberately broken copy, whose denials are not the run's. */
  { report: writeReport = true }: { report?: boolean } = {},
): Promise<AssemblyRuntime> {
  const runtime = await startAssemblyRuntime({ dir: assemblyDir(), node: node24Path(), ...options });
  return {
    ...runtime,
    close: async () => {
      const report = runtime.iam();
      await runtime.close();
      const reportDir = process.env.ASSEMBLY_REPORT_DIR;
      if (reportDir && writeReport) {
        mkdirSync(reportDir, { recursive: true });
        writeFileSync(
          join(reportDir, `${randomUUID()}.json`),
          JSON.stringify({
            calls: report.calls,
            denied: report.denied,
            routesCalled: [...runtime.routesCalled],
          }),
        );
      }
      if (report.denied.length > 0) {
        throw new Error(
          `IAM would deny ${report.denied.length} DynamoDB call(s):\n${report.denied
            .map((call) => `${call.function} ${call.operation}: ${JSON.stringify(call.checks)}`)
            .join('\n')}`,
        );
      }
    },
  };
}
