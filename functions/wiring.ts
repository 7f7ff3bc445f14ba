/**
 * The composition root of the handlers: their use cases' ports, wired to the DynamoDB adapters of the
 * tables named in the environment, on one document client per function, once per cold start (the keys
 * that sign are made in ./keys.ts). A handler builds no adapter itself (a test checks it), and passes
 * only its own environment (`environmentOf` in lib/definitions/environment.ts): the variables its
 * definition gives it, which are the ones its stack sets.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UsagePlanKeys } from '#lib/adapters/api-gateway/api-gateway-keys';
import { CachedBoardRepository, CachedMembershipRepository } from '#lib/adapters/cache/read-cache';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoCoveredSessions } from '#lib/adapters/dynamodb/covered-sessions';
import { DynamoCutoffRecords } from '#lib/adapters/dynamodb/cutoff-records';
import { DynamoEventStore } from '#lib/adapters/dynamodb/events';
import { DynamoDestinationRateLimit } from '#lib/adapters/dynamodb/host-rates';
import { DynamoIdempotencyRepository } from '#lib/adapters/dynamodb/idempotency';
import { DynamoKeyringStore } from '#lib/adapters/dynamodb/keyring';
import { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { DynamoWebhookRepository } from '#lib/adapters/dynamodb/webhooks';
import { EventBusSink } from '#lib/adapters/eventbridge/event-bus';
import { destinationPost } from '#lib/adapters/outbound-http/destination-post';
import { type DeliveryQueueDeps, SqsDeliveryScheduler } from '#lib/adapters/sqs/delivery-queue';
import {
  PUBLIC_DESTINATIONS,
  WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
  WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
} from '#lib/domain/destinations';
import type { EventSink } from '#lib/domain/events';
import type { RotationPolicy } from '#lib/domain/keyring';
import type { Clock, IdempotencyRepository, RandomSource } from '#lib/domain/ports';
import { awsClientSettings, withCallPolicy } from '#lib/platform/aws-clients';
import {
  type AuthorizerConfig,
  type CreateSessionConfig,
  type CreateWebhookConfig,
  type DynamoConfig,
  type EmbedPageConfig,
  type EventPipelineConfig,
  type IdTokenKeysConfig,
  type PublishedKeysConfig,
  readCreateWebhookConfig,
  readEventPipelineConfig,
  readProvisioningConfig,
  readStorageConfig,
} from '#lib/platform/config';
import { createLogger } from '#lib/platform/logger';
import { createMetrics } from '#lib/platform/metrics';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { RECORD_ONLY_THROTTLING } from '#lib/use-cases/admin';
import { type AuthorizeApiKeyDeps, lastUseIntervalSeconds } from '#lib/use-cases/authorize-api-key';
import { BackChannelLogoutSink, type LogoutDeps } from '#lib/use-cases/back-channel-logout';
import type { CreateSessionDeps } from '#lib/use-cases/create-session';
import type { ListSessionsDeps } from '#lib/use-cases/list-sessions';
import { queuedFanOutStarts } from '#lib/use-cases/logout-fan-out';
import type { ManageSessionDeps } from '#lib/use-cases/manage-session';
import type { OpenEmbedSessionDeps } from '#lib/use-cases/open-embed-session';
import type { ProcessorDeps, SweepDeps } from '#lib/use-cases/publish-events';
import type { RevokeUserSessionsDeps } from '#lib/use-cases/revoke-user-sessions';
import { AWS_RETRY_SECONDS, WebhookSink } from '#lib/use-cases/webhook-delivery';
import type { WebhookDeps } from '#lib/use-cases/webhooks';
import { idTokenPortsOf, keyRotationOf, signingKeySetOf, webhookSecretsOf } from './keys';

type Env = Record<string, string | undefined>;

/** Ports of retrieving and revoking one session. */
export function manageSessionDeps(env: Env): ManageSessionDeps {
  const { tables, dynamo } = readStorageConfig(env, ['sessions', 'memberships']);
  const db = createDocumentClient(dynamo);
  return {
    sessions: new DynamoSessionRepository(db, tables.sessions),
    memberships: new DynamoMembershipRepository(db, tables.memberships),
    clock: systemClock,
  };
}

/** Ports of listing a user's or a board's sessions. */
export function sessionScopeDeps(env: Env): ListSessionsDeps {
  const { tables, dynamo } = readStorageConfig(env, ['sessions', 'boards', 'memberships']);
  const db = createDocumentClient(dynamo);
  return {
    sessions: new DynamoSessionRepository(db, tables.sessions),
    boards: new DynamoBoardRepository(db, tables.boards),
    memberships: new DynamoMembershipRepository(db, tables.memberships),
    clock: systemClock,
  };
}

/** Ports of revoking a user's or a board's sessions: the listing's, and the cut-off record writes. */
export function revokeUserSessionsDeps(env: Env): RevokeUserSessionsDeps {
  const { tables, dynamo } = readStorageConfig(env, ['sessions', 'boards', 'memberships']);
  const db = createDocumentClient(dynamo);
  return {
    sessions: new DynamoSessionRepository(db, tables.sessions),
    cutoffs: new DynamoCutoffRecords(db, tables.sessions),
    boards: new DynamoBoardRepository(db, tables.boards),
    memberships: new DynamoMembershipRepository(db, tables.memberships),
    clock: systemClock,
    random: cryptoRandom,
  };
}

/**
 * Ports of the provisioning API: every table an operator's change touches, and API Gateway's usage plans
 * on AWS (the stage's default plan, by name); off AWS the key record is all there is, as for the CLI.
 */
export function provisioningDeps(env: Env) {
  const config = readProvisioningConfig(env);
  const db = createDocumentClient(config.dynamo);
  return {
    boards: new DynamoBoardRepository(db, config.tables.boards),
    memberships: new DynamoMembershipRepository(db, config.tables.memberships),
    apiKeys: new DynamoApiKeyRepository(db, config.tables.apiKeys),
    sessions: new DynamoSessionRepository(db, config.tables.sessions),
    cutoffs: new DynamoCutoffRecords(db, config.tables.sessions),
    throttling:
      config.usagePlanName !== undefined
        ? usagePlanKeys(config.dynamo.region, config.usagePlanName)
        : RECORD_ONLY_THROTTLING,
    // http://127.0.0.1 and http://localhost applications only off AWS, as the admin CLI allows them.
    appUrlRule: { allowLoopbackHttp: config.dynamo.endpoint !== undefined },
    clock: systemClock,
    random: cryptoRandom,
  };
}

/** Ports of the events API. */
export function eventsDeps(env: Env): { events: DynamoEventStore } {
  const { tables, dynamo } = readStorageConfig(env, ['events']);
  return { events: new DynamoEventStore(createDocumentClient(dynamo), tables.events) };
}

/** The Idempotency-Key middleware's ports: the idempotency table on the function's document client. */
type IdempotencyDeps = { idempotency: IdempotencyRepository; clock: Clock; random: RandomSource };

function idempotencyDepsOf(db: DynamoDBDocumentClient, table: string): IdempotencyDeps {
  return {
    idempotency: new DynamoIdempotencyRepository(db, table),
    clock: systemClock,
    random: cryptoRandom,
  };
}
/**
 * Ports of creating a session, and of the Idempotency-Key middleware around it, on one client. The board
 * and the key owner's membership come through this environment's 1 s cache (lib/adapters/cache/read-cache.ts):
 * every create of a hot board reads them, and a change may take a second to count here.
 */
export function createSessionDeps(config: Pick<CreateSessionConfig, 'tables' | 'dynamo'>): {
  deps: CreateSessionDeps;
  idempotencyDeps: IdempotencyDeps;
} {
  const db: DynamoDBDocumentClient = createDocumentClient(config.dynamo);
  return {
    deps: {
      boards: new CachedBoardRepository(new DynamoBoardRepository(db, config.tables.boards), systemClock),
      memberships: new CachedMembershipRepository(
        new DynamoMembershipRepository(db, config.tables.memberships),
        systemClock,
      ),
      sessions: new DynamoSessionRepository(db, config.tables.sessions),
      clock: systemClock,
      random: cryptoRandom,
    },
    idempotencyDeps: idempotencyDepsOf(db, config.tables.idempotency),
  };
}

/**
 * Ports of opening the embed page: the board through this environment's 1 s cache, the session and its
 * cut-off records read on every load (a revocation counts at once).
 */
export function openEmbedSessionDeps(
  config: Pick<EmbedPageConfig, 'tables' | 'dynamo'>,
): OpenEmbedSessionDeps {
  const db = createDocumentClient(config.dynamo);
  return {
    sessions: new DynamoSessionRepository(db, config.tables.sessions),
    boards: new CachedBoardRepository(new DynamoBoardRepository(db, config.tables.boards), systemClock),
    clock: systemClock,
    random: cryptoRandom,
  };
}

/**
 * The authorizer's ports: the API keys table, the clock, how often a key's last use is written, and on
 * AWS the stage's default usage plan (by name), where a key issued before usage plans is registered.
 */
export function authorizerDeps(config: AuthorizerConfig): AuthorizeApiKeyDeps {
  return {
    apiKeys: new DynamoApiKeyRepository(createDocumentClient(config.dynamo), config.tables.apiKeys),
    clock: systemClock,
    lastUseIntervalSeconds: lastUseIntervalSeconds(config.authorizerCacheTtlSeconds),
    ...(config.usagePlanName !== undefined
      ? { usagePlans: usagePlanKeys(config.dynamo.region, config.usagePlanName) }
      : {}),
  };
}

/** The stage's default usage plan, by name, through API Gateway's client under the one call policy. */
function usagePlanKeys(region: string, planName: string): UsagePlanKeys {
  return new UsagePlanKeys(withCallPolicy(new APIGatewayClient(awsClientSettings({ region }))), {
    name: planName,
  });
}

/** The event pipeline's delivery queue, with the limits of every AWS call. */
function sqsClient(region: string): SQSClient {
  return withCallPolicy(new SQSClient(awsClientSettings({ region })));
}

/** The stack's event bus, with the limits of every AWS call. */
function eventBridgeClient(region: string): EventBridgeClient {
  return withCallPolicy(new EventBridgeClient(awsClientSettings({ region })));
}

/**
 * The sinks of the stream consumer and the sweep: the stack's bus, each owner's events handed to the
 * delivery queue (its worker expands them into the owner's webhook deliveries), and back-channel logouts
 * of the boards with a logout URL to the same queue (signed by its worker).
 */
function pipelineSinks(config: EventPipelineConfig<'boards'>, db: DynamoDBDocumentClient): EventSink[] {
  const scheduler = new SqsDeliveryScheduler(
    sqsClient(config.dynamo.region),
    config.deliveryQueueUrl,
    systemClock,
  );
  return [
    new EventBusSink(eventBridgeClient(config.dynamo.region), config.eventBusName ?? ''),
    new WebhookSink({ handOffs: scheduler }),
    new BackChannelLogoutSink({
      boards: new DynamoBoardRepository(db, config.tables.boards),
      stageAppUrl: config.logout.boardAppUrl,
      appUrlRule: config.logout.appUrlRule,
      scheduler: scheduler.logouts,
    }),
  ];
}

/**
 * Ports of the sessions table's stream consumer: besides the sinks, it starts the logout fan-out of each
 * cut-off a revoke-all writes, as a first message on the delivery queue (whose worker runs the steps).
 */
export function sessionStreamDeps(env: Env): ProcessorDeps {
  const config = readEventPipelineConfig(env, ['events', 'boards'], { eventBus: true });
  const db = createDocumentClient(config.dynamo);
  const queue = new SqsDeliveryScheduler(
    sqsClient(config.dynamo.region),
    config.deliveryQueueUrl,
    systemClock,
  );
  return {
    store: new DynamoEventStore(db, config.tables.events),
    sinks: pipelineSinks(config, db),
    now: () => systemClock.now(),
    fanOuts: queuedFanOutStarts(queue),
  };
}

/** Ports of the expiry sweep: the stream consumer's, and the sessions it re-reads. */
export function expirySweepDeps(env: Env): SweepDeps {
  const config = readEventPipelineConfig(env, ['events', 'sessions', 'boards'], {
    eventBus: true,
  });
  const db = createDocumentClient(config.dynamo);
  return {
    store: new DynamoEventStore(db, config.tables.events),
    sessions: new DynamoSessionRepository(db, config.tables.sessions),
    sinks: pipelineSinks(config, db),
    now: () => systemClock.now(),
  };
}

/**
 * Ports of the delivery queue's worker, on the AWS retry schedule: the expansion of each handed-off event
 * into its owner's webhook deliveries and each delivery's attempts, back-channel logout
 * (each attempt signs its logout token in KMS), and the steps of a revoke-all's logout fan-out (which
 * read the sessions table).
 */
export function webhookDeliveryDeps(env: Env): DeliveryQueueDeps {
  const config = readEventPipelineConfig(env, ['webhooks', 'boards', 'sessions'], {
    eventBus: false,
    signs: true,
  });
  const db = createDocumentClient(config.dynamo);
  const scheduler = new SqsDeliveryScheduler(
    sqsClient(config.dynamo.region),
    config.deliveryQueueUrl,
    systemClock,
  );
  const metrics = createMetrics({ service: 'webhook-delivery' });
  const boards = new DynamoBoardRepository(db, config.tables.boards);
  // Public internet hosts only, checked at each attempt after resolving, connecting to what was checked.
  const post = destinationPost(PUBLIC_DESTINATIONS);
  const logouts: LogoutDeps = {
    boards,
    tokens: idTokenPorts(config.logout.idTokenKeys),
    issuer: config.logout.issuer ?? '',
    stageAppUrl: config.logout.boardAppUrl,
    appUrlRule: config.logout.appUrlRule,
    scheduler: scheduler.logouts,
    post,
    clock: systemClock,
    random: cryptoRandom,
    logger: createLogger({ component: 'backchannel-logout' }),
    metrics,
    retrySeconds: AWS_RETRY_SECONDS,
  };
  return {
    webhooks: new DynamoWebhookRepository(db, config.tables.webhooks),
    secrets: webhookSecretsOf(config.secrets),
    // Every worker counts in the same table, so the bound and each owner's share hold across invocations.
    hostRate: new DynamoDestinationRateLimit(
      db,
      config.tables.webhooks,
      systemClock,
      WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND,
      WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND,
    ),
    scheduler,
    post,
    clock: systemClock,
    logger: createLogger({ component: 'webhook-delivery' }),
    metrics,
    retrySeconds: AWS_RETRY_SECONDS,
    logouts,
    fanOut: {
      sessions: new DynamoCoveredSessions(db, config.tables.sessions),
      boards,
      stageAppUrl: config.logout.boardAppUrl,
      appUrlRule: config.logout.appUrlRule,
      queue: scheduler,
      logger: createLogger({ component: 'logout-fan-out' }),
    },
  };
}

/** Ports of listing and deleting webhook endpoints: the endpoint table alone. */
export function webhookEndpointDeps(env: Env): Pick<WebhookDeps, 'webhooks' | 'clock'> {
  const { tables, dynamo } = readStorageConfig(env, ['webhooks']);
  return {
    webhooks: new DynamoWebhookRepository(createDocumentClient(dynamo), tables.webhooks),
    clock: systemClock,
  };
}

/**
 * Ports of rotating a webhook endpoint's secret, and the Idempotency-Key middleware's ports, on one
 * document client.
 */
export function rotateWebhookSecretDeps(env: Env): { deps: WebhookDeps; idempotencyDeps: IdempotencyDeps } {
  const { deps, idempotencyDeps } = createWebhookDeps(env);
  return { deps, idempotencyDeps };
}

/**
 * Ports of creating a webhook endpoint, its configuration, and the Idempotency-Key middleware's ports, on
 * one document client.
 */
export function createWebhookDeps(env: Env): {
  deps: WebhookDeps;
  config: CreateWebhookConfig;
  idempotencyDeps: IdempotencyDeps;
} {
  const config = readCreateWebhookConfig(env);
  const db = createDocumentClient(config.dynamo);
  return {
    config,
    deps: {
      webhooks: new DynamoWebhookRepository(db, config.tables.webhooks),
      secrets: webhookSecretsOf(config.secrets),
      clock: systemClock,
      random: cryptoRandom,
    },
    idempotencyDeps: idempotencyDepsOf(db, config.tables.idempotency),
  };
}

/** The ID token keyring's table (the signing keys table), for the keys made in functions/keys.ts. */
function keyringStore(table: string, dynamo: DynamoConfig): DynamoKeyringStore {
  return new DynamoKeyringStore(createDocumentClient(dynamo), table);
}

/** The ID token signer and pairwise subjects of the keyring, made on first use. */
export function idTokenPorts(config: IdTokenKeysConfig | undefined) {
  return idTokenPortsOf(config, keyringStore);
}

/** The JWKS of the keyring (public halves only), made on first use. */
export function publishedKeys(config: PublishedKeysConfig | undefined) {
  return signingKeySetOf(config, keyringStore);
}

/** The keyring's rotation on `policy`'s schedule. */
export function keyRotation(config: IdTokenKeysConfig, policy: RotationPolicy) {
  return keyRotationOf(config, policy, keyringStore);
}
