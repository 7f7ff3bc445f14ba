/** `npm start`: the whole service on this machine, on an embedded DynamoDB or the one at DYNAMODB_ENDPOINT. */
import { readDynamoEndpoint, readInteger } from '#lib/platform/config';
import { startBoardApp } from '../examples/board-app/server';
import { consoleLogger, logFormatOf } from './console-log';
import { DataDirError, DynamoUnreachableError, reachableHost } from './dynamodb';
import { startLocalRuntime } from './runtime';

// Node 20 is supported here on purpose (see README); the SDK's notice about future versions is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const STOP_TIMEOUT_MS = 5_000;

const problems: string[] = [];
const port = readInteger(process.env, 'PORT', 3000, 0, 65535, problems);
const dynamoPort = readInteger(process.env, 'DYNAMODB_PORT', 8000, 0, 65535, problems);
const boardAppPort = readInteger(process.env, 'BOARD_APP_PORT', 3001, 0, 65535, problems);
// Only the endpoint: the local runtime needs no AWS region, credentials or profile (it sets its own).
const dynamoEndpoint = readDynamoEndpoint(process.env, problems);
if (problems.length > 0) {
  console.error(`Invalid configuration: ${problems.join('; ')}`);
  process.exit(1);
}

// A person at a terminal reads one short line per request; the functions' own JSON lines would drown
// them, so there only their warnings and errors show (LOG_LEVEL still decides when set).
const logFormat = logFormatOf(process.env, process.stdout.isTTY === true);
if (logFormat === 'human') process.env.LOG_LEVEL ??= 'warn';
const gatewayLog = consoleLogger(logFormat);

const host = process.env.HOST || '127.0.0.1';
/**
 * The reference board application (examples/board-app), beside the service: it listens first, so the demo
 * boards are seeded with its URL as their `appUrl`, and the demo link shows a real board in the iframe.
 */
// Its URL must be loopback http (or https), so on another HOST it still listens on loopback only.
const boardAppHost = reachableHost(host) === 'localhost' ? 'localhost' : '127.0.0.1';
const startingBoardApp = startBoardApp({
  port: boardAppPort,
  host: reachableHost(host) === '127.0.0.1' ? host : boardAppHost,
  publicHost: boardAppHost,
});
const starting = startingBoardApp
  .then(async (boardApp) => {
    try {
      const runtime = await startLocalRuntime({
        logger: gatewayLog.logger,
        port,
        dynamoPort,
        host,
        dataDir: process.env.DATA_DIR || undefined,
        dynamoEndpoint,
        seed: true,
        demoAppUrl: boardApp.appUrl,
        demoLogoutUrl: `${boardApp.origin}/backchannel-logout`,
      });
      boardApp.serve({ issuer: runtime.baseUrl });
      return {
        runtime,
        boardApp,
        close: async () => {
          await boardApp.close();
          await runtime.close();
        },
      };
    } catch (error) {
      await boardApp.close();
      throw error;
    }
  })
  .catch((error: NodeJS.ErrnoException) => {
    console.error(`Cannot start: ${startFailure(error)}`);
    process.exit(1);
  });

/** One line for what stopped the start, naming the variable to change; never a stack trace. */
function startFailure(error: NodeJS.ErrnoException): string {
  if (error.code === 'EADDRINUSE')
    return `${error.message.replace(/^listen EADDRINUSE: address already in use /, '')} is already in use. Set PORT / DYNAMODB_PORT / BOARD_APP_PORT to free ports.`;
  if (error instanceof DataDirError)
    return `${error.message}. Set DATA_DIR to a folder you can write, or unset it to keep data in memory.`;
  if (error instanceof DynamoUnreachableError && dynamoEndpoint)
    return `DYNAMODB_ENDPOINT ${error.endpoint} cannot be reached (${error.reason}). Start that DynamoDB, or unset DYNAMODB_ENDPOINT to use the embedded one.`;
  return error.message;
}

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

const { runtime, boardApp } = await starting;
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
  await boardApp.close();
  await runtime.close();
  process.exit(1);
}
const { embedUrl } = created;
const dynamoLine = runtime.embeddedDynamo
  ? `Embedded DynamoDB  ${runtime.dynamoEndpoint}  (${process.env.DATA_DIR ? `persisted in ${process.env.DATA_DIR}` : 'in memory'})`
  : `DynamoDB           ${runtime.dynamoEndpoint}  (DYNAMODB_ENDPOINT; tables created there when missing${process.env.DATA_DIR ? '; DATA_DIR unused' : ''})`;

// Webhooks and back-channel logouts go to public internet hosts only, as on AWS, unless the operator
// allows receivers on this machine; the demo application's logouts are the runtime's own.
const loopbackLine = runtime.destinations.allowLoopback
  ? 'Loopback receivers allowed (WEBHOOK_ALLOW_LOOPBACK=1): webhooks and logouts may go to 127.0.0.1, ::1, localhost'
  : 'Loopback receivers refused: webhooks and logouts go to public hosts only (WEBHOOK_ALLOW_LOOPBACK=1 allows 127.0.0.1, ::1, localhost)';

console.log(`
Embed session service running locally
  API base URL       ${runtime.baseUrl}
  API reference      ${runtime.baseUrl}/docs   (and ${runtime.baseUrl}/ for where to go next)
  ${dynamoLine}
  Demo API key       ${demo?.apiKey}   (user ${demo?.userId}; shown once)
  Provisioning API   ${runtime.baseUrl}/admin/…, signed with AWS SigV4 (service execute-api, region ${runtime.provisioning.region}):
                     PROVISIONING_ACCESS_KEY_ID=${runtime.provisioning.accessKeyId} PROVISIONING_SECRET_ACCESS_KEY=${runtime.provisioning.secretAccessKey}
  Demo boards        ${demo?.publicBoardId} (PUBLIC), ${demo?.privateBoardId} (PRIVATE, your org), ${demo?.otherOrgBoardId} (PRIVATE, other org)
  Board application  ${boardApp.origin}   (examples/board-app, the demo boards' appUrl; BOARD_APP_PORT)
  Rate limit per key ${runtime.apiKeyLimits.rate} requests/s, bursts of ${runtime.apiKeyLimits.burst} (API_KEY_RATE_LIMIT, API_KEY_BURST_LIMIT)
  Embed page limit   ${runtime.clientLimit?.requests} loads per 5 minutes per client address (EMBED_PAGE_RATE_LIMIT)
  ${loopbackLine}

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
// The banner first, then the requests (the demo session's included) as they come.
gatewayLog.release();
