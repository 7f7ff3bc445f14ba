/** The composition root of the webhook endpoint handlers, once per cold start. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoWebhookRepository } from '#lib/dynamodb/webhooks';
import { readWebhooksConfig, type WebhooksConfig } from '#lib/platform/config';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { lazyWebhookSecrets } from '#lib/signing/webhook-keys';
import type { WebhookDeps } from '#lib/use-cases/webhooks';

type Env = Record<string, string | undefined>;

/** Ports of the webhook endpoint routes, their configuration, and the document client they share. */
export function webhookDeps(env: Env): {
  deps: WebhookDeps;
  config: WebhooksConfig;
  db: DynamoDBDocumentClient;
} {
  const config = readWebhooksConfig(env);
  const db = createDocumentClient(config.dynamo);
  return {
    config,
    db,
    deps: {
      webhooks: new DynamoWebhookRepository(db, config.tables.webhooks),
      secrets: lazyWebhookSecrets(config.secrets),
      clock: systemClock,
      random: cryptoRandom,
    },
  };
}
