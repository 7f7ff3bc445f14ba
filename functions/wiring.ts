/**
 * The composition root of the handlers: their use cases' ports, wired to the DynamoDB adapters of the
 * tables named in the environment, on one document client per function, once per cold start. A handler
 * builds no adapter itself (a test checks it).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyRepository, Clock, IdempotencyRepository, RandomSource } from '#lib/domain/ports';
import { DynamoApiKeyRepository } from '#lib/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/dynamodb/boards';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoEventStore } from '#lib/dynamodb/events';
import { DynamoIdempotencyRepository } from '#lib/dynamodb/idempotency';
import { DynamoMembershipRepository } from '#lib/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { DynamoWebhookRepository } from '#lib/dynamodb/webhooks';
import {
  type AuthorizerConfig,
  type CreateSessionConfig,
  type EmbedPageConfig,
  readStorageConfig,
  readWebhooksConfig,
  type WebhooksConfig,
} from '#lib/platform/config';
import { cryptoRandom, systemClock, timerSleep } from '#lib/platform/system';
import type { CreateSessionDeps } from '#lib/use-cases/create-session';
import type { ListSessionsDeps } from '#lib/use-cases/list-sessions';
import type { ManageSessionDeps } from '#lib/use-cases/manage-session';
import { DEFAULT_MISS_RETRY_DELAYS_MS, type OpenEmbedSessionDeps } from '#lib/use-cases/open-embed-session';
import type { RevokeUserSessionsDeps } from '#lib/use-cases/revoke-user-sessions';
import type { WebhookDeps } from '#lib/use-cases/webhooks';

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

/** Ports of listing and revoking a user's or a board's sessions. */
export function sessionScopeDeps(env: Env): ListSessionsDeps & RevokeUserSessionsDeps {
  const { tables, dynamo } = readStorageConfig(env, ['sessions', 'boards', 'memberships']);
  const db = createDocumentClient(dynamo);
  return {
    sessions: new DynamoSessionRepository(db, tables.sessions),
    boards: new DynamoBoardRepository(db, tables.boards),
    memberships: new DynamoMembershipRepository(db, tables.memberships),
    clock: systemClock,
    random: cryptoRandom,
  };
}

/** Ports of the events API. */
export function eventsDeps(env: Env): { events: DynamoEventStore } {
  const { tables, dynamo } = readStorageConfig(env, ['events']);
  return { events: new DynamoEventStore(createDocumentClient(dynamo), tables.events) };
}

/** Ports of creating a session, and of the Idempotency-Key middleware around it, on one client. */
export function createSessionDeps(config: Pick<CreateSessionConfig, 'tables' | 'dynamo'>): {
  deps: CreateSessionDeps;
  idempotencyDeps: { idempotency: IdempotencyRepository; clock: Clock; random: RandomSource };
} {
  const db: DynamoDBDocumentClient = createDocumentClient(config.dynamo);
  return {
    deps: {
      boards: new DynamoBoardRepository(db, config.tables.boards),
      memberships: new DynamoMembershipRepository(db, config.tables.memberships),
      sessions: new DynamoSessionRepository(db, config.tables.sessions),
      clock: systemClock,
      random: cryptoRandom,
    },
    idempotencyDeps: {
      idempotency: new DynamoIdempotencyRepository(db, config.tables.idempotency),
      clock: systemClock,
      random: cryptoRandom,
    },
  };
}

/** Ports of opening the embed page. */
export function openEmbedSessionDeps(
  config: Pick<EmbedPageConfig, 'tables' | 'dynamo'>,
): OpenEmbedSessionDeps {
  const db = createDocumentClient(config.dynamo);
  return {
    sessions: new DynamoSessionRepository(db, config.tables.sessions),
    boards: new DynamoBoardRepository(db, config.tables.boards),
    clock: systemClock,
    sleep: timerSleep,
    random: cryptoRandom,
    missRetryDelaysMs: DEFAULT_MISS_RETRY_DELAYS_MS,
  };
}

/** The authorizer's one port: the API keys table. */
export function authorizerDeps(config: Pick<AuthorizerConfig, 'tables' | 'dynamo'>): {
  apiKeys: ApiKeyRepository;
} {
  return { apiKeys: new DynamoApiKeyRepository(createDocumentClient(config.dynamo), config.tables.apiKeys) };
}

/**
 * Ports of the webhook endpoint routes, their configuration, and, for creating one, the Idempotency-Key
 * middleware's ports, on one document client. The handler passes how secrets are made
 * (`lazyWebhookSecrets`): imported here, its KMS client would land in every bundle.
 */
export function webhookDeps(
  env: Env,
  secretsOf: (config: WebhooksConfig['secrets']) => WebhookDeps['secrets'],
): {
  deps: WebhookDeps;
  config: WebhooksConfig;
  idempotencyDeps: { idempotency: IdempotencyRepository; clock: Clock; random: RandomSource };
} {
  const config = readWebhooksConfig(env);
  const db = createDocumentClient(config.dynamo);
  return {
    config,
    deps: {
      webhooks: new DynamoWebhookRepository(db, config.tables.webhooks),
      secrets: secretsOf(config.secrets),
      clock: systemClock,
      random: cryptoRandom,
    },
    idempotencyDeps: {
      idempotency: new DynamoIdempotencyRepository(db, config.tables.idempotency),
      clock: systemClock,
      random: cryptoRandom,
    },
  };
}
