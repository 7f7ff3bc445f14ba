// One cold start: node child.mjs <bundle> <job JSON>, in a fresh Node process like a Lambda execution
// environment. Its static import of the stub patches node:https before the bundle is imported. It times
// from just before `import(bundle)` to the first handler result, with performance.now() inside this
// process, so process spawn and Node's own boot are not part of the number, and prints one result line
// after a marker, so anything the bundle logs to stdout cannot be mistaken for the result.
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import './dynamo-stub.mjs';
import { stats } from './memory-tables.mjs';

const [bundle, jobJson] = process.argv.slice(2);
const job = JSON.parse(jobJson ?? '{}');

/** A Lambda-like context; middy arms its early-timeout timer from getRemainingTimeInMillis, as in Lambda. */
const context = {
  awsRequestId: 'bench',
  functionName: 'bench',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 10_000,
};

/**
 * The status code of a proxy result, or "allow" for the authorizer's policy and "ok" for the floors'
 * results. A job's `expectBody` must appear in the body: otherwise the status says so, and run.ts, which
 * compares statuses, stops (a revoke-all that revoked nothing answers 200 too).
 */
function statusOf(result) {
  if (result && typeof result === 'object' && 'statusCode' in result) {
    const body = typeof result.body === 'string' ? result.body : '';
    if (job.expectBody !== undefined && !body.includes(job.expectBody)) {
      return `${result.statusCode} without ${job.expectBody} in its body`;
    }
    return result.statusCode;
  }
  return result && typeof result === 'object' && 'policyDocument' in result ? 'allow' : 'ok';
}

function report(result) {
  process.stdout.write(`\n@@BENCH@@${JSON.stringify(result)}\n`);
}

try {
  const start = performance.now();
  const { handler } = await import(pathToFileURL(resolve(bundle)).href);
  const imported = performance.now();
  const result = await handler(job.event ?? {}, context);
  const end = performance.now();
  const byOperation = { ...stats.byOperation };
  // Then, when asked, `warm` more loads of the same event in this now warm environment, one after another
  // as Lambda sends them: their median time, and the DynamoDB calls they made together.
  const warmMs = [];
  for (let load = 0; load < (job.warm ?? 0); load++) {
    const before = performance.now();
    const again = await handler(job.event ?? {}, context);
    warmMs.push(performance.now() - before);
    if (statusOf(again) !== statusOf(result))
      throw new Error(`warm load ${load} answered ${statusOf(again)}`);
  }
  const warmCalls = Object.fromEntries(
    Object.entries(stats.byOperation).map(([operation, count]) => [
      operation,
      count - (byOperation[operation] ?? 0),
    ]),
  );
  warmMs.sort((a, b) => a - b);
  report({
    ms: end - start,
    importMs: imported - start,
    status: statusOf(result),
    byOperation,
    ...(warmMs.length > 0 ? { warmMedianMs: warmMs[Math.floor(warmMs.length / 2)], warmCalls } : {}),
  });
} catch (error) {
  report({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
}
// Nothing may keep the process alive (an SDK timer or keep-alive agent must not delay the next run).
process.exit();
