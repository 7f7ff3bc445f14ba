import { apiKeyOf, keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { jsonResponse } from '#lib/adapters/http/response';
import { parseListWebhooksQuery } from '#lib/adapters/http/validation/list-webhooks';
import { environmentOf } from '#lib/definitions/environment';
import { listWebhooks } from '#lib/use-cases/webhooks';
import { webhookEndpointDeps } from './wiring';

const deps = webhookEndpointDeps(environmentOf('listWebhooks', process.env));

/** GET /api/embed/webhooks?limit=…&cursor=…: a page of the caller's endpoints, never a secret. */
export const handler = jsonApiHandler('list-webhooks', {}, async (event) => {
  const query = parseListWebhooksQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
  return jsonResponse(
    200,
    await listWebhooks(deps, { ...keyOwnerOf(event), apiKey: apiKeyOf(event) }, query),
  );
});
