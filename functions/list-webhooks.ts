import { environmentOf } from '#lib/definitions/environment';
import { apiKeyOf, keyOwnerOf } from '#lib/http/api-gateway';
import { jsonApiHandler } from '#lib/http/handler';
import { jsonResponse } from '#lib/http/response';
import { listWebhooks } from '#lib/use-cases/webhooks';
import { parseListWebhooksQuery } from '#lib/validation/list-webhooks';
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
