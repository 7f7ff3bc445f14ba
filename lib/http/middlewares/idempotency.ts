import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ValidationError } from '#lib/domain/errors';
import { isIdempotencyKey } from '#lib/domain/idempotency';
import { apiKeyOf, keyOwnerOf } from '#lib/http/api-gateway';
import { API_HEADERS, headerValue } from '#lib/http/response';
import {
  claimIdempotencyKey,
  finishIdempotentRequest,
  type IdempotencyClaim,
  type IdempotencyDeps,
} from '#lib/use-cases/idempotent-request';

/** The response header that marks a replayed answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * `Idempotency-Key` on a route: the first request with a key runs and its answer is stored (encrypted);
 * a repeat with the same key and body gets that answer again, marked `Idempotent-Replayed: true`. Register
 * it before the error mapper, so that it sees the final answer of a failed request too: errors other than
 * 5xx are stored and replayed, a 5xx is forgotten so a retry runs again. Without the header, nothing happens.
 */
export function idempotency(options: {
  deps: IdempotencyDeps;
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
      });
      if ('replay' in outcome) {
        return {
          statusCode: outcome.replay.status,
          headers: { ...API_HEADERS, [REPLAYED_HEADER]: 'true' },
          body: outcome.replay.body,
        };
      }
      claims.set(request, outcome.claim);
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
