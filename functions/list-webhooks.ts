import { keyOwnerOf } from '#lib/http/api-gateway';
import { jsonApiHandler } from '#lib/http/handler';
import { jsonResponse } from '#lib/http/response';
import { lazyWebhookSecrets } from '#lib/signing/webhook-keys';
import { listWebhooks } from '#lib/use-cases/webhooks';
import { webhookDeps } from './wiring';

const { deps } = webhookDeps(process.env, lazyWebhookSecrets);

/** GET /api/embed/webhooks: the caller's endpoints, never a secret. */
export const handler = jsonApiHandler('list-webhooks', {}, async (event) =>
  jsonResponse(200, { data: await listWebhooks(deps, keyOwnerOf(event)) }),
);
