import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { apiKeyOf, keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { API_HEADERS, headerValue } from '#lib/adapters/http/response';
import { ValidationError } from '#lib/domain/errors';
import { isIdempotencyKey } from '#lib/domain/idempotency';
import { remainingMs } from '#lib/platform/deadline';
import {
  claimIdempotencyKey,
  finishIdempotentRequest,
  type IdempotencyClaim,
  type IdempotencyDeps,
} from '#lib/use-cases/idempotent-request';
import { REQUEST_BUDGET_MS } from './request-budget';

/** The response header that marks a replayed answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The reservation of the Idempotency-Key each event claimed, for its handler. */
const reservations = new WeakMap<object, string>();

/**
 * What the route's `reserve` fixed when the request's Idempotency-Key was first claimed (the same for
 * every attempt with that key), or undefined for a request without a key.
 */
export function idempotencyReservationOf(event: APIGatewayProxyEvent): string | undefined {
  return reservations.get(event);
}

/**
 * `Idempotency-Key` on a route: the first request with a key runs and its answer is stored (encrypted);
 * a repeat with the same key and body gets that answer again, marked `Idempotent-Replayed: true`. Register
 * it before the error mapper, so that it sees the final answer of a failed request too: errors other than
 * 5xx are stored and replayed, a 5xx is not (a retry runs again, at once). Without the header, nothing happens.
 * A request holds its key for what is left of its request budget; `reserve` makes what the route fixes at
 * the first claim (see `idempotencyReservationOf`).
 */
export function idempotency(options: {
  deps: IdempotencyDeps;
  reserve?: () => string;
}): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const claims = new WeakMap<object, IdempotencyClaim>();
  const finish = async (request: middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult>) => {
    const claim = claims.get(request);
    if (!claim || !request.response) return;
    claims.delete(request);
    await finishIdempotentRequest(options.deps, claim, {
      status: request.response.statusCode,
      body: request.response.body,
    });
  };
  return {
    before: async (request) => {
      const { event } = request;
      const idempotencyKey = headerValue(event.headers, 'idempotency-key');
      if (idempotencyKey === undefined) return undefined;
      if (!isIdempotencyKey(idempotencyKey)) {
        throw new ValidationError(
          'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
        );
      }
      const outcome = await claimIdempotencyKey(options.deps, {
        ownerUserId: keyOwnerOf(event).userId,
        apiKey: apiKeyOf(event),
        idempotencyKey,
        body: rawBody(event),
        leaseMs: remainingMs() ?? REQUEST_BUDGET_MS,
        ...(options.reserve ? { reserve: options.reserve } : {}),
      });
      if ('replay' in outcome) {
        return {
          statusCode: outcome.replay.status,
          headers: { ...API_HEADERS, [REPLAYED_HEADER]: 'true' },
          body: outcome.replay.body,
        };
      }
      claims.set(request, outcome.claim);
      if (outcome.claim.reservation !== undefined) reservations.set(event, outcome.claim.reservation);
      return undefined;
    },
    after: finish,
    onError: finish,
  };
}

/** The body exactly as the client sent it. */
function rawBody(event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): string {
  if (event.body == null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}
