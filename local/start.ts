/** `npm start`: the whole service on this machine, on an embedded DynamoDB or the one at DYNAMODB_ENDPOINT. */
import { readDynamoEndpoint, readInteger } from '#lib/platform/config';
import { startLocalRuntime } from './runtime';

// Node 20 is supported here on purpose (see README); the SDK's notice about future versions is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const STOP_TIMEOUT_MS = 5_000;

const problems: string[] = [];
const port = readInteger(process.env, 'PORT', 3000, 0, 65535, problems);
const dynamoPort = readInteger(process.env, 'DYNAMODB_PORT', 8000, 0, 65535, problems);
// Only the endpoint: the local runtime needs no AWS region, credentials or profile (it sets its own).
const dynamoEndpoint = readDynamoEndpoint(process.env, problems);
if (problems.length > 0) {
  console.error(`Invalid configuration: ${problems.join('; ')}`);
  process.exit(1);
}

const starting = startLocalRuntime({
  port,
  dynamoPort,
  host: process.env.HOST || '127.0.0.1',
  dataDir: process.env.DATA_DIR || undefined,
  dynamoEndpoint,
  seed: true,
}).catch((error: NodeJS.ErrnoException) => {
  // The common failure is a port in use; say which and how to choose another, without a stack trace.
  console.error(
    error.code === 'EADDRINUSE'
      ? `Cannot start: ${error.message.replace(/^listen EADDRINUSE: address already in use /, '')} is already in use. Set PORT / DYNAMODB_PORT to free ports.`
      : `Cannot start: ${error.message}`,
  );
  process.exit(1);
});

let stopping = false;
/**
 * Ctrl-C and SIGTERM close the runtime (the embedded DynamoDB flushes DATA_DIR on close), then exit. The
 * signal may come twice (a terminal's Ctrl-C reaches npm too, which forwards it), so later ones are ignored;
 * a close that hangs ends the process after STOP_TIMEOUT_MS anyway.
 */
const stop = async () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    console.error('Stopping took too long; exiting without a clean close.');
    process.exit(1);
  }, STOP_TIMEOUT_MS).unref();
  // A signal during start-up waits for the runtime, so what it started is closed too.
  await (await starting.catch(() => undefined))?.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

const runtime = await starting;
const demo = runtime.demo;
/** The request the banner suggests; the demo session below is the same one, so the two never differ. */
const demoRequest = {
  boardId: demo?.publicBoardId,
  userId: 'customer-42',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  plan: 'pro',
};
const body = JSON.stringify(demoRequest);

// A demo session created through the API itself, so the banner can offer a link that opens right away.
const demoSession = await fetch(`${runtime.baseUrl}/api/embed/sessions`, {
  method: 'POST',
  headers: { Authorization: `Bearer ${demo?.apiKey}`, 'Content-Type': 'application/json' },
  body,
});
const created = (await demoSession.json()) as { embedUrl?: string; message?: string };
if (demoSession.status !== 201 || !created.embedUrl) {
  console.error(
    `Cannot start: the demo session was refused (${demoSession.status} ${created.message ?? ''})`,
  );
  await runtime.close();
  process.exit(1);
}
const { embedUrl } = created;
const dynamoLine = runtime.embeddedDynamo
  ? `Embedded DynamoDB  ${runtime.dynamoEndpoint}  (${process.env.DATA_DIR ? `persisted in ${process.env.DATA_DIR}` : 'in memory'})`
  : `DynamoDB           ${runtime.dynamoEndpoint}  (DYNAMODB_ENDPOINT; tables created there when missing${process.env.DATA_DIR ? '; DATA_DIR unused' : ''})`;

console.log(`
Embed session service running locally
  API base URL       ${runtime.baseUrl}
  ${dynamoLine}
  Demo API key       ${demo?.apiKey}   (user ${demo?.userId}; shown once)
  Demo boards        ${demo?.publicBoardId} (PUBLIC), ${demo?.privateBoardId} (PRIVATE, your org), ${demo?.otherOrgBoardId} (PRIVATE, other org)
  Rate limit per key ${runtime.apiKeyLimits.rate} requests/s, bursts of ${runtime.apiKeyLimits.burst} (API_KEY_RATE_LIMIT, API_KEY_BURST_LIMIT)

Open the demo board as an embedded user (valid for 30 days):
  ${embedUrl}

Create a session:
  curl -sS -X POST ${runtime.baseUrl}/api/embed/sessions \\
    -H 'Authorization: Bearer ${demo?.apiKey}' \\
    -H 'Content-Type: application/json' \\
    -d '${body}'

Admin CLI against this runtime:
  DYNAMODB_ENDPOINT=${runtime.dynamoEndpoint} npm run --silent admin -- list-boards
`);
