// One benchmark process: node child.mjs <cold|warm> <bundle> <job JSON>. Its static import of the stub
// patches node:https before the bundle is imported.
// It runs in a fresh Node process like a Lambda execution environment and prints one result line after a
// marker, so anything the bundle logs to stdout cannot be mistaken for the result.
//
// cold: time from just before `import(bundle)` to the first handler result, read with performance.now()
//       inside this process, so process spawn and Node's own boot are not part of the number.
// warm: `warmup` untimed invocations, then `iterations` timed ones, one at a time (as Lambda does).
//       The writes of each invocation are undone after it, outside the timed span, so every invocation
//       meets the seeded data (a revoke revokes, rather than finding the session revoked already).
// once: one invocation of a freshly loaded bundle, reporting its wall and CPU time and its answer: the
//       revoke-all timing, where the DynamoDB stub may add latency per call.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { stubTime } from './dynamo-stub.mjs';
import { rollback, stats } from './memory-tables.mjs';

const [mode, bundle, jobJson] = process.argv.slice(2);
const job = JSON.parse(jobJson ?? '{}');
const events = job.events ?? [{}];

/**
 * A Lambda-like context; middy arms its early-timeout timer from getRemainingTimeInMillis, as in Lambda.
 * A `remainingMs` job counts down from the start of the process's one invocation (the function's real
 * deadline, for the revoke-all timing); otherwise every invocation starts with 10 s left.
 */
let deadline;
const context = {
  awsRequestId: 'bench',
  functionName: 'bench',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => (deadline === undefined ? 10_000 : Math.max(0, deadline - Date.now())),
};

/** A fresh copy per invocation: middlewares may replace parts of the event (the JSON body parser does). */
const eventAt = (i) => structuredClone(events[i % events.length]);

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

/** Loads a handler module as Lambda's Node.js runtime does: `import()` an ES module, `require` CommonJS. */
async function load(file) {
  const path = resolve(file);
  return path.endsWith('.cjs') ? createRequire(import.meta.url)(path) : import(pathToFileURL(path).href);
}

function report(result) {
  process.stdout.write(`\n@@BENCH@@${JSON.stringify(result)}\n`);
}

try {
  if (mode === 'cold') {
    const event = eventAt(0);
    const start = performance.now();
    const { handler } = await load(bundle);
    const imported = performance.now();
    const result = await handler(event, context);
    const end = performance.now();
    report({
      ms: end - start,
      importMs: imported - start,
      status: statusOf(result),
      calls: stats.calls,
      byOperation: stats.byOperation,
    });
  } else if (mode === 'warm') {
    const { handler } = await load(bundle);
    const warmup = job.warmup ?? 1000;
    const iterations = job.iterations ?? 10_000;
    const statuses = {};
    for (let i = 0; i < warmup; i++) {
      await handler(eventAt(i), context);
      rollback();
    }
    const callsBefore = stats.calls;
    const byOperationBefore = { ...stats.byOperation };
    const times = new Float64Array(iterations);
    const cpuTimes = new Float64Array(iterations);
    for (let i = 0; i < iterations; i++) {
      const event = eventAt(i);
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      const result = await handler(event, context);
      times[i] = performance.now() - start;
      const cpu = process.cpuUsage(cpuStart);
      cpuTimes[i] = (cpu.user + cpu.system) / 1000;
      const status = statusOf(result);
      statuses[status] = (statuses[status] ?? 0) + 1;
      rollback();
    }
    const byOperation = {};
    for (const [operation, count] of Object.entries(stats.byOperation)) {
      const delta = count - (byOperationBefore[operation] ?? 0);
      if (delta > 0) byOperation[operation] = delta / iterations;
    }
    times.sort();
    cpuTimes.sort();
    const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    report({
      iterations,
      p50: at(times, 0.5),
      p90: at(times, 0.9),
      p99: at(times, 0.99),
      max: times[times.length - 1],
      mean: times.reduce((a, b) => a + b, 0) / times.length,
      cpuP50: at(cpuTimes, 0.5),
      cpuP99: at(cpuTimes, 0.99),
      callsPerRequest: (stats.calls - callsBefore) / iterations,
      byOperation,
      statuses,
    });
  } else if (mode === 'once') {
    const event = eventAt(0);
    const importStart = performance.now();
    const { handler } = await load(bundle);
    const imported = performance.now();
    if (job.remainingMs !== undefined) deadline = Date.now() + job.remainingMs;
    const cpuStart = process.cpuUsage();
    const stubBefore = { ...stubTime };
    const result = await handler(event, context);
    const ms = performance.now() - imported;
    const cpu = process.cpuUsage(cpuStart);
    report({
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      stubMs: stubTime.ms - stubBefore.ms,
      stubCpuMs: stubTime.cpuMs - stubBefore.cpuMs,
      importMs: imported - importStart,
      status: statusOf(result),
      body: typeof result?.body === 'string' ? result.body : undefined,
      calls: stats.calls,
      byOperation: stats.byOperation,
    });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (error) {
  report({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
}
// Nothing may keep the process alive (an SDK timer or keep-alive agent must not delay the next run).
process.exit();
