import { keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { idempotency, idempotencyReservationOf } from '#lib/adapters/http/middlewares/idempotency';
import { jsonBody } from '#lib/adapters/http/middlewares/json-body';
import { jsonResponse } from '#lib/adapters/http/response';
import { parseCreateWebhookRequest } from '#lib/adapters/http/validation/create-webhook';
import { environmentOf } from '#lib/definitions/environment';
import { isWebhookId, newWebhookId } from '#lib/domain/webhook';
import { cryptoRandom } from '#lib/platform/system';
import { createWebhook } from '#lib/use-cases/webhooks';
import { createWebhookDeps } from './wiring';

const { deps, config, idempotencyDeps } = createWebhookDeps(environmentOf('createWebhook', process.env));

/** A body far above any valid one (a 2,048-character URL, five types, a 256-character description). */
const MAX_BODY_BYTES = 16 * 1024;

/** POST /api/embed/webhooks, idempotent with an Idempotency-Key: a keyed create fixes its endpoint id. */
export const handler = jsonApiHandler(
  'create-webhook',
  {
    outer: [idempotency({ deps: idempotencyDeps, reserve: () => newWebhookId(cryptoRandom.uuid()) })],
    inner: [jsonBody({ maxBytes: MAX_BODY_BYTES })],
  },
  async (event) => {
    const reserved = idempotencyReservationOf(event);
    const created = await createWebhook(deps, {
      keyOwner: keyOwnerOf(event),
      request: parseCreateWebhookRequest(event.body as unknown),
      destinations: config.destinations,
      ...(reserved !== undefined && isWebhookId(reserved) ? { id: reserved } : {}),
    });
    return jsonResponse(201, created);
  },
);
