import type middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { denyPolicy } from '#lib/adapters/http/api-gateway';
import { InvalidApiKeyError, MissingApiKeyError } from '#lib/domain/errors';
import { describeError, type Logger } from '#lib/platform/logger';

/** The one error API Gateway answers with 401 (its UNAUTHORIZED response). */
export const UNAUTHORIZED = 'Unauthorized';

/**
 * What the authorizer throws when it could not check the key at all (DynamoDB down, a bug). Any error but
 * `Unauthorized` fails the authorizer, which API Gateway reports as AUTHORIZER_CONFIGURATION_ERROR or
 * AUTHORIZER_FAILURE; the stack and the local gateway answer both with 503 and Retry-After
 * (lib/adapters/http/gateway-responses.ts).
 */
export const AUTHORIZER_FAILED = 'Authorizer failed: the API key could not be checked';

/**
 * Makes an authorizer fail closed without blaming the key for our outage, and tells the two refusals
 * apart the only ways API Gateway lets a TOKEN authorizer do it:
 * - no Bearer credential (no header, another scheme) is exactly `Unauthorized`: API Gateway's
 *   UNAUTHORIZED response, the same one it sends itself when the header is absent ("send your key so");
 * - a malformed, unknown or revoked key is a Deny policy: API Gateway's ACCESS_DENIED response, which the
 *   stack answers with 401 "The API key is invalid";
 * - any other failure is logged as an error (it raises an alarm) and fails the authorizer (503).
 * Every way the request is refused, never let through.
 */
export function authorizerErrors(options: {
  logger: Logger;
}): middy.MiddlewareObj<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult> {
  return {
    onError: (request) => {
      const log = options.logger.child({ requestId: request.context.awsRequestId });
      if (request.error instanceof MissingApiKeyError) {
        log.info('api key missing', { reason: request.error.message });
        request.error = new Error(UNAUTHORIZED);
      } else if (request.error instanceof InvalidApiKeyError) {
        const policy = denyPolicy(request.event?.methodArn);
        if (policy) {
          log.info('api key refused', { reason: request.error.message });
          request.error = null;
          request.response = policy;
          return;
        }
        log.error('api key refused, but methodArn is malformed', { reason: request.error.message });
        request.error = new Error(AUTHORIZER_FAILED);
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
