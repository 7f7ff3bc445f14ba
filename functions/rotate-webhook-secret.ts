import { keyOwnerOf, pathParameter } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { idempotency, idempotencyReservationOf } from '#lib/adapters/http/middlewares/idempotency';
import { optionalJsonBody } from '#lib/adapters/http/middlewares/optional-json-body';
import { jsonResponse } from '#lib/adapters/http/response';
import { parseRotateWebhookSecretRequest } from '#lib/adapters/http/validation/create-webhook';
import { environmentOf } from '#lib/definitions/environment';
import { cryptoRandom } from '#lib/platform/system';
import { rotateWebhookSecret } from '#lib/use-cases/webhooks';
import { rotateWebhookSecretDeps } from './wiring';

const { deps, idempotencyDeps } = rotateWebhookSecretDeps(environmentOf('rotateWebhookSecret', process.env));

/** A body far above any valid one (`{"overlapSeconds": 604800}`). */
const MAX_BODY_BYTES = 1024;

/**
 * POST /api/embed/webhooks/{id}/rotate-secret: 200 with the new secret, shown once; the body is optional
 * (none: the default overlap). Idempotent with an Idempotency-Key: a repeat answers the same secret
 * rather than rotating again.
 */
export const handler = jsonApiHandler(
  'rotate-webhook-secret',
  {
    // A keyed request fixes its rotation id at its first claim: its retry recognises the rotation it made.
    outer: [idempotency({ deps: idempotencyDeps, reserve: () => cryptoRandom.uuid() })],
    inner: [optionalJsonBody({ maxBytes: MAX_BODY_BYTES })],
  },
  async (event) => {
    const rotated = await rotateWebhookSecret(deps, keyOwnerOf(event), pathParameter(event, 'id'), {
      ...parseRotateWebhookSecretRequest(event.body ?? undefined),
      ...reservedRotation(event),
    });
    return jsonResponse(200, rotated);
  },
);

/** The rotation id the request's Idempotency-Key fixed, if it has one. */
function reservedRotation(event: Parameters<typeof idempotencyReservationOf>[0]): { rotationId?: string } {
  const reserved = idempotencyReservationOf(event);
  return reserved !== undefined ? { rotationId: reserved } : {};
}
