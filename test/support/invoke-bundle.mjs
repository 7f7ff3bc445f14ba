// Loads a Lambda bundle in a fresh Node process, as the Lambda runtime does, and invokes its handler
// once: node invoke-bundle.mjs <bundle.mjs> <event JSON>. Prints the outcome after a marker line.
import { pathToFileURL } from 'node:url';

const [bundle, eventJson] = process.argv.slice(2);
const context = {
  awsRequestId: 'bundle-test',
  functionName: 'bundle-test',
  getRemainingTimeInMillis: () => 10_000,
  callbackWaitsForEmptyEventLoop: false,
};
let outcome;
try {
  const { handler } = await import(pathToFileURL(bundle).href);
  outcome = { ok: true, result: await handler(JSON.parse(eventJson), context) };
} catch (error) {
  outcome = { ok: false, message: error instanceof Error ? error.message : String(error) };
}
process.stdout.write(`\n@@OUTCOME@@${JSON.stringify(outcome)}\n`);
