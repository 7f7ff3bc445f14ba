import { environmentOf } from '#lib/definitions/environment';
import { keyOwnerOf } from '#lib/http/api-gateway';
import { jsonApiHandler } from '#lib/http/handler';
import { jsonResponse } from '#lib/http/response';
import { listWebhooks } from '#lib/use-cases/webhooks';
import { webhookEndpointDeps } from './wiring';

const deps = webhookEndpointDeps(environmentOf('listWebhooks', process.env));

/** GET /api/embed/webhooks: the caller's endpoints, never a secret. */
export const handler = jsonApiHandler('list-webhooks', {}, async (event) =>
  jsonResponse(200, { data: await listWebhooks(deps, keyOwnerOf(event)) }),
);
