import type middy from '@middy/core';
import { InvalidApiKeyError } from '#lib/domain/errors';
import { describeError, type Logger } from '#lib/platform/logger';

/**
 * Makes an authorizer fail closed: whatever went wrong, API Gateway gets exactly `Unauthorized`, which it
 * answers with 401. An unexpected failure (DynamoDB down) is logged as an error, but the request is still
 * refused, never let through.
 */
export function unauthorizedOnError(options: { logger: Logger }): middy.MiddlewareObj {
  return {
    onError: (request) => {
      const log = options.logger.child({ requestId: request.context.awsRequestId });
      if (request.error instanceof InvalidApiKeyError) {
        log.info('api key refused', { reason: request.error.message });
      } else {
        log.error('authorizer failed; refusing the request', describeError(request.error));
      }
      request.error = new Error('Unauthorized');
    },
  };
}
