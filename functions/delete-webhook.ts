import { keyOwnerOf, pathParameter } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { emptyResponse } from '#lib/adapters/http/response';
import { environmentOf } from '#lib/definitions/environment';
import { deleteWebhook } from '#lib/use-cases/webhooks';
import { webhookEndpointDeps } from './wiring';

const deps = webhookEndpointDeps(environmentOf('deleteWebhook', process.env));

/** DELETE /api/embed/webhooks/{id}: 204; another owner's id, or none, is a 404. */
export const handler = jsonApiHandler('delete-webhook', {}, async (event) => {
  await deleteWebhook(deps, keyOwnerOf(event), pathParameter(event, 'id'));
  return emptyResponse(204);
});
