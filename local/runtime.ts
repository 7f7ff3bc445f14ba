import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { webhookSecretsOf } from '#functions/keys';
import { idTokenPorts } from '#functions/wiring';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoCoveredSessions } from '#lib/adapters/dynamodb/covered-sessions';
import { DynamoDestinationRateLimit } from '#lib/adapters/dynamodb/host-rates';
import { DynamoWebhookRepository } from '#lib/adapters/dynamodb/webhooks';
import { gatewaySecurityHeaders } from '#lib/adapters/http/gateway-responses';
import type { RotationResult } from '#lib/adapters/signing/keyring-keys';
import { FUNCTIONS, type FunctionName } from '#lib/definitions/routes';
import { LOCAL_TABLE_NAMES, TABLE_KEYS, TABLES } from '#lib/definitions/tables';
import type { RateLimit } from '#lib/domain/api-key';
import {
  type DestinationPolicy,
  WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
  WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
} from '#lib/domain/destinations';
import type { EventSink } from '#lib/domain/events';
import {
  appUrlRuleFor,
  fail,
  readBoardAppUrl,
  readDestinationPolicy,
  readFrameAncestors,
  readIdTokenKeys,
  readWebhookRetrySeconds,
  readWebhookSecrets,
} from '#lib/platform/config';
import { createLogger, type Logger } from '#lib/platform/logger';
import { systemClock } from '#lib/platform/system';
import { localBackChannelLogout } from '#local/back-channel-logout';
import { localWebhookDelivery } from '#local/webhook-delivery';
import { clientErrorResponder } from './client-errors';
import { ensureTables, reachableHost, startEmbeddedDynamo } from './dynamodb';
import { type LocalEvents, startLocalEvents } from './events';
import { createGateway, type LambdaHandler } from './gateway';
import { localIdTokenKeyFile } from './id-token-keys';
import { type LocalKeyRotation, startLocalKeyRotation } from './key-rotation';
import { type ClientLimit, type MonotonicClock, readApiKeyLimits, readClientLimit } from './rate-limiter';
import { type DemoData, seedDemoData } from './seed';
import { localWebhookMasterKeyFile } from './webhook-keys';

export interface LocalRuntimeOptions {
  /** API port; 0 picks a free one. */
  port: number;
  /** Embedded DynamoDB port; 0 picks a free one. */
  dynamoPort: number;
  /**
   * Use this DynamoDB instead of starting the embedded one (AWS's DynamoDB Local, or a fault-injecting
   * proxy in tests): its missing tables are created, and it is left running on close.
   */
  dynamoEndpoint?: string;
  host?: string;
  /** Persist DynamoDB data under this folder; in memory when absent. */
  dataDir?: string;
  /** Seed the demo boards, membership and a fresh demo API key. */
  seed?: boolean;
  /** The demo boards' `appUrl` (the reference board application `npm start` runs beside the service). */
  demoAppUrl?: string;
  /** The demo boards' `logoutUrl` (that application's back-channel logout endpoint). */
  demoLogoutUrl?: string;
  logger?: Logger;
  /** The per-key rate limiter's clock (milliseconds, monotonic); tests pass one they move by hand. */
  rateLimitClock?: MonotonicClock;
  /** More consumers of the session events (tests record them); they come after the runtime's own. */
  eventSinks?: EventSink[];
}

/**
 * The credentials the local provisioning routes accept, standing in for an IAM principal allowed to call
 * them (see local/sigv4.ts): sign with them as with AWS credentials, service `execute-api`, this region.
 */
export interface LocalProvisioningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The principal the provisioning API records as who made each change. */
  principalArn: string;
}

/** The local principal of the provisioning routes: an IAM user of the local runtime's account. */
export const LOCAL_PROVISIONING_PRINCIPAL = 'arn:aws:iam::000000000000:user/local-provisioning';

export interface LocalRuntime {
  baseUrl: string;
  /** Who may call the provisioning routes, and as whom they are recorded. */
  provisioning: LocalProvisioningCredentials;
  dynamoEndpoint: string;
  /** True when the runtime started its own DynamoDB (dynalite) rather than using `dynamoEndpoint`. */
  embeddedDynamo: boolean;
  tables: Record<keyof typeof TABLES, string>;
  demo: DemoData | undefined;
  /** The limit of keys without their own, from API_KEY_RATE_LIMIT and API_KEY_BURST_LIMIT. */
  apiKeyLimits: RateLimit;
  /** The embed page's limit per client address, from EMBED_PAGE_RATE_LIMIT; absent where none applies. */
  clientLimit?: ClientLimit;
  /** Where webhooks and logouts may go: public hosts, and loopback with WEBHOOK_ALLOW_LOOPBACK=1. */
  destinations: DestinationPolicy;
  /**
   * The change feed turning session changes into events (as the stream consumer does on AWS); absent
   * where something else serves the routes (the assembly runner).
   */
  events?: LocalEvents;
  /**
   * Where this runtime's session events go: webhook delivery (signed, retried on the schedule of
   * WEBHOOK_RETRY_SECONDS), then back-channel logout (on the same schedule). The local change feed
   * publishes to each of them, and starts the logout fan-out of each revoke-all's cut-offs.
   */
  eventSinks: readonly EventSink[];
  /**
   * Resolves once every back-channel logout scheduled so far is done, a revoke-all's fan-out included
   * (absent where something else serves the routes, as `events`).
   */
  logoutsSettled?: () => Promise<void>;
  /** Runs the keyring's scheduled rotation once, as its timer does. */
  rotateKeys?: () => Promise<RotationResult>;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs the whole service on this machine: dynalite (or the DynamoDB at `dynamoEndpoint`) with the shared
 * tables, and the local gateway invoking the same handler exports Lambda invokes. Handlers read their
 * configuration from `process.env` at import, exactly as in Lambda, so the environment is set before they
 * load.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? createLogger({ component: 'local-gateway' });
  const dynamo = options.dynamoEndpoint
    ? { endpoint: options.dynamoEndpoint, close: async () => undefined }
    : await startEmbeddedDynamo({ port: options.dynamoPort, host, dataDir: options.dataDir });
  // The embedded DynamoDB sees every write, so the change feed reads only the items written (below).
  const sessionWrites =
    'watchWrites' in dynamo ? dynamo.watchWrites(LOCAL_TABLE_NAMES.sessions, 'id') : undefined;
  let server: Server | undefined;
  let events: LocalEvents | undefined;
  let keyRotation: LocalKeyRotation | undefined;
  try {
    await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);

    let gateway: ReturnType<typeof createGateway> | undefined;
    server = createServer((req, res) => {
      if (gateway) gateway(req, res);
      else res.writeHead(503).end();
    });
    server.listen(options.port, host);
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    // Listening on every interface is no address to browse to: links name this machine's loopback.
    const baseUrl = `http://${reachableHost(host)}:${port}`;

    process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
    process.env.AWS_REGION = 'local';
    process.env.PUBLIC_BASE_URL ||= baseUrl;
    for (const key of TABLE_KEYS) process.env[TABLES[key].envVar] = LOCAL_TABLE_NAMES[key];
    // The key that opens the keyring of the keys that sign ID tokens (KMS's stand-in).
    process.env.ID_TOKEN_KEY_FILE ||= await localIdTokenKeyFile(options.dataDir);
    // The master key that webhook signing secrets are derived from (KMS's stand-in).
    process.env.WEBHOOK_MASTER_KEY_FILE ||= await localWebhookMasterKeyFile(options.dataDir);

    const problems: string[] = [];
    const frameAncestors = readFrameAncestors(process.env, problems);
    const apiKeyLimits = readApiKeyLimits(process.env, problems);
    const clientLimit = readClientLimit(process.env, problems);
    const retrySeconds = readWebhookRetrySeconds(process.env, problems);
    const webhookSecrets = readWebhookSecrets(process.env, problems);
    const appUrlRule = appUrlRuleFor(process.env.PUBLIC_BASE_URL);
    const stageAppUrl = readBoardAppUrl(process.env, appUrlRule, problems);
    const idTokenKeys = readIdTokenKeys(
      process.env,
      { endpoint: dynamo.endpoint, region: 'local' },
      problems,
    );
    // WEBHOOK_ALLOW_LOOPBACK=1: the operator allows receivers on this machine (create-webhook reads it too).
    const destinations = readDestinationPolicy(process.env, problems);
    fail(problems);
    // The reference application this runtime's own start put beside it (`demoLogoutUrl`) is sent its
    // logouts whatever the setting: it is no tenant's destination, and it only runs on loopback.
    const logoutDestinations: DestinationPolicy = options.demoLogoutUrl
      ? { ...destinations, trustedOrigins: [new URL(options.demoLogoutUrl).origin] }
      : destinations;
    const securityHeaders = gatewaySecurityHeaders(frameAncestors);
    const provisioning = localProvisioningCredentials(process.env);
    gateway = createGateway({
      iamCredentials: [
        {
          accessKeyId: provisioning.accessKeyId,
          secretAccessKey: provisioning.secretAccessKey,
          userArn: provisioning.principalArn,
        },
      ],
      handlers: await loadHandlers(),
      domainName: `${reachableHost(host)}:${port}`,
      logger,
      securityHeaders,
      apiKeyLimits,
      clientLimit,
      clock: options.rateLimitClock,
    });
    server.on('clientError', clientErrorResponder(securityHeaders));

    const client = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
    // The keyring is made before the first hand-off, then rotates on the short local schedule.
    keyRotation = idTokenKeys
      ? await startLocalKeyRotation(idTokenKeys, logger.child({ component: 'key-rotation' }))
      : undefined;
    const demo = options.seed
      ? await seedDemoData(client, LOCAL_TABLE_NAMES, {
          appUrl: options.demoAppUrl,
          logoutUrl: options.demoLogoutUrl,
          destinations: logoutDestinations,
        })
      : undefined;

    const webhooks = localWebhookDelivery({
      webhooks: new DynamoWebhookRepository(client, LOCAL_TABLE_NAMES.webhooks),
      secrets: webhookSecretsOf(webhookSecrets),
      // The same counters as on AWS, in the local webhooks table.
      hostRate: new DynamoDestinationRateLimit(
        client,
        LOCAL_TABLE_NAMES.webhooks,
        systemClock,
        WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
        WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
      ),
      retrySeconds,
      logger: logger.child({ component: 'webhook-delivery' }),
      destinations,
    });

    // Back-channel logout to the application of a board with a `logoutUrl`, signed by the ID token keys.
    const logouts = localBackChannelLogout({
      boards: new DynamoBoardRepository(client, LOCAL_TABLE_NAMES.boards),
      // What a revoke-all's logouts read: the cut-offs and the sessions they cover.
      sessions: new DynamoCoveredSessions(client, LOCAL_TABLE_NAMES.sessions),
      tokens: idTokenPorts(idTokenKeys),
      issuer: process.env.PUBLIC_BASE_URL,
      stageAppUrl,
      appUrlRule,
      retrySeconds,
      logger: logger.child({ component: 'backchannel-logout' }),
      destinations: logoutDestinations,
    });

    // Where the session events go once recorded: webhook delivery, back-channel logout, then what tests
    // add through `eventSinks`.
    const sinks: EventSink[] = [webhooks.sink, logouts.sink, ...(options.eventSinks ?? [])];
    events = await startLocalEvents({
      client,
      tables: LOCAL_TABLE_NAMES,
      sinks,
      fanOuts: logouts.fanOuts,
      logger,
      ...(sessionWrites ? { written: sessionWrites } : {}),
    });
    const feed = events;
    const rotation = keyRotation;

    const listening = server;
    return {
      baseUrl: process.env.PUBLIC_BASE_URL,
      provisioning,
      dynamoEndpoint: dynamo.endpoint,
      embeddedDynamo: !options.dynamoEndpoint,
      tables: LOCAL_TABLE_NAMES,
      demo,
      apiKeyLimits,
      clientLimit,
      destinations,
      events: feed,
      eventSinks: [webhooks.sink, logouts.sink],
      logoutsSettled: () => logouts.settled(),
      rotateKeys: async () => {
        if (!rotation) throw new Error('The local runtime has no ID token keys');
        return rotation.rotate();
      },
      close: async () => {
        rotation?.stop();
        await feed.stop();
        await webhooks.close();
        await logouts.close();
        client.destroy();
        listening.closeAllConnections();
        await new Promise<void>((resolve) => listening.close(() => resolve()));
        await dynamo.close();
      },
    };
  } catch (error) {
    keyRotation?.stop();
    await events?.stop();
    server?.close();
    await dynamo.close();
    throw error;
  }
}

/**
 * The provisioning routes' credentials: PROVISIONING_ACCESS_KEY_ID and PROVISIONING_SECRET_ACCESS_KEY
 * when both are set (a backend developed against `npm start` keeps its configuration across restarts),
 * else a pair drawn for this start.
 */
export function localProvisioningCredentials(
  env: Record<string, string | undefined>,
): LocalProvisioningCredentials {
  const accessKeyId = env.PROVISIONING_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.PROVISIONING_SECRET_ACCESS_KEY?.trim();
  const given = accessKeyId && secretAccessKey;
  return {
    accessKeyId: given ? accessKeyId : `LOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: given ? secretAccessKey : randomBytes(30).toString('base64url'),
    region: 'local',
    principalArn: LOCAL_PROVISIONING_PRINCIPAL,
  };
}

/** Imports each function's `handler` export from its entry file, as the Lambda runtime would. */
async function loadHandlers(): Promise<Record<FunctionName, LambdaHandler>> {
  const entries = await Promise.all(
    (Object.keys(FUNCTIONS) as FunctionName[]).map(async (name) => {
      const module = (await import(`${ROOT}${FUNCTIONS[name].entry}`)) as { handler: LambdaHandler };
      return [name, module.handler] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<FunctionName, LambdaHandler>;
}
