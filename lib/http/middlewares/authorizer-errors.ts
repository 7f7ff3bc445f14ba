import type middy from '@middy/core';
import { InvalidApiKeyError } from '#lib/domain/errors';
import { describeError, type Logger } from '#lib/platform/logger';

/** The one error API Gateway answers with 401 (its UNAUTHORIZED response). */
export const UNAUTHORIZED = 'Unauthorized';

/**
 * What the authorizer throws when it could not check the key at all (DynamoDB down, a bug). Any error but
 * `Unauthorized` fails the authorizer, which API Gateway reports as AUTHORIZER_CONFIGURATION_ERROR or
 * AUTHORIZER_FAILURE; the stack and the local gateway answer both with 503 and Retry-After
 * (lib/definitions/gateway-responses.ts).
 */
export const AUTHORIZER_FAILED = 'Authorizer failed: the API key could not be checked';

/**
 * Makes an authorizer fail closed without blaming the key for our outage: a missing, malformed, unknown or
 * revoked key is exactly `Unauthorized` (401); any other failure is logged as an error (it raises an alarm)
 * and fails the authorizer (503). Either way the request is refused, never let through.
 */
export function authorizerErrors(options: { logger: Logger }): middy.MiddlewareObj {
  return {
    onError: (request) => {
      const log = options.logger.child({ requestId: request.context.awsRequestId });
      if (request.error instanceof InvalidApiKeyError) {
        log.info('api key refused', { reason: request.error.message });
        request.error = new Error(UNAUTHORIZED);
      } else {
        log.error(
          'authorizer failed; refusing the request without blaming the key',
          describeError(request.error),
        );
        request.error = new Error(AUTHORIZER_FAILED);
      }
    },
  };
}
