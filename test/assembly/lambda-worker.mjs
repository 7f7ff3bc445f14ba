// One Lambda execution environment for the assembly runner: run on Node 24 with the function's
// environment and cwd, it loads the function's asset from the cloud assembly once (its init), then runs
// one invocation at a time as the parent sends them over IPC, as Lambda's runtime does.
// node lambda-worker.mjs <asset folder> <handler, e.g. index.handler> <function name> <memory MB>
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [codeDir, handlerSpec, functionName, memoryMb] = process.argv.slice(2);
const dot = handlerSpec.lastIndexOf('.');
const base = handlerSpec.slice(0, dot);
const exportName = handlerSpec.slice(dot + 1);

function errorOf(error) {
  return {
    errorType: error instanceof Error ? error.name : 'Error',
    errorMessage: error instanceof Error ? error.message : String(error),
  };
}

let handler;
let initError;
try {
  // Lambda's Node runtime looks for .mjs, then .cjs, then .js.
  const file = ['.mjs', '.cjs', '.js'].map((ext) => join(codeDir, `${base}${ext}`)).find(existsSync);
  if (!file)
    throw Object.assign(new Error(`Cannot find module '${base}'`), { name: 'Runtime.ImportModuleError' });
  const module = await import(pathToFileURL(file).href);
  handler = module[exportName];
  if (typeof handler !== 'function') {
    throw Object.assign(new Error(`${handlerSpec} is undefined or not exported`), {
      name: 'Runtime.HandlerNotFound',
    });
  }
} catch (error) {
  initError = errorOf(error);
}

process.on('message', async ({ id, event, deadline }) => {
  if (initError) {
    process.send({ id, ok: false, init: true, ...initError });
    return;
  }
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: process.env.ASSEMBLY_FUNCTION_ARN ?? functionName,
    memoryLimitInMB: memoryMb,
    awsRequestId: id,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME ?? `/aws/lambda/${functionName}`,
    logStreamName: 'assembly',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const result = await handler(event, context);
    process.send({ id, ok: true, result: result === undefined ? null : result });
  } catch (error) {
    process.send({ id, ok: false, ...errorOf(error) });
  }
});
// The init's outcome goes with the ready message, so a start-up check needs no invocation.
process.send({ ready: true, ...(initError ? { initError } : {}) });
