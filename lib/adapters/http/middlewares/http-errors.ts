import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { requestIdOf } from '#lib/adapters/http/request-id';
import { jsonError } from '#lib/adapters/http/response';
import {
  ApiKeyNotFoundError,
  BoardAccessDeniedError,
  BoardNotFoundError,
  DependencyUnavailableError,
  type DomainError,
  EmbeddedBoardGoneError,
  IdempotencyConflictError,
  IdempotencyKeyReusedError,
  InvalidApiKeyError,
  InvalidTokenError,
  MissingTokenError,
  PayloadTooLargeError,
  SessionBoundElsewhereError,
  SessionExpiredError,
  SessionNotFoundError,
  SessionRevokedError,
  UnsupportedMediaTypeError,
  ValidationError,
  WebhookLimitReachedError,
  WebhookNotFoundError,
  WebhookRotationConflictError,
} from '#lib/domain/errors';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '#lib/domain/retry-after';
import { describeError, type Logger } from '#lib/platform/logger';

type ErrorClass = abstract new (...args: never[]) => DomainError;

/** The single mapping from domain errors to HTTP statuses. */
const STATUS_BY_ERROR: ReadonlyArray<readonly [ErrorClass, number]> = [
  [ValidationError, 400],
  [MissingTokenError, 400],
  [InvalidApiKeyError, 401],
  [InvalidTokenError, 401],
  [SessionExpiredError, 401],
  [SessionRevokedError, 401],
  [SessionBoundElsewhereError, 401],
  [BoardAccessDeniedError, 403],
  [BoardNotFoundError, 404],
  [EmbeddedBoardGoneError, 404],
  [SessionNotFoundError, 404],
  [WebhookNotFoundError, 404],
  [ApiKeyNotFoundError, 404],
  [IdempotencyConflictError, 409],
  [WebhookRotationConflictError, 409],
  [PayloadTooLargeError, 413],
  [UnsupportedMediaTypeError, 415],
  [IdempotencyKeyReusedError, 422],
  [WebhookLimitReachedError, 422],
  [DependencyUnavailableError, 503],
];

/** The HTTP status of an error, or 500 for anything that is not a known domain error. */
export function statusOf(error: unknown): number {
  for (const [type, status] of STATUS_BY_ERROR) {
    if (error instanceof type) return status;
  }
  return 500;
}

/** The seconds a 409 asks the client to wait before retrying. */
function retryAfterOf(error: unknown): number {
  return error instanceof IdempotencyConflictError ? error.retryAfterSeconds : 1;
}

export type ErrorRenderer = (
  status: number,
  message: string,
  headers: Record<string, string>,
) => APIGatewayProxyResult;

/**
 * Turns any thrown error into the house error response and logs it with the request id.
 * Known domain errors keep their message; anything else becomes a 500 that shows no internals.
 * `render` lets the embed page answer in HTML while sharing the mapping.
 */
export function httpErrors(options: {
  logger: Logger;
  render?: (request: middy.Request) => ErrorRenderer;
}): middy.MiddlewareObj<unknown, APIGatewayProxyResult> {
  return {
    onError: (request) => {
      const { error } = request;
      const status = statusOf(error);
      const log = options.logger.child({ requestId: requestIdOf(request.event, request.context) });
      const headers: Record<string, string> = {};
      let message: string;
      if (status === 500) {
        log.error('unexpected error', describeError(error));
        message = 'An unexpected error occurred';
      } else {
        message = (error as Error).message;
        if (status === 503) {
          headers['Retry-After'] = String(UNAVAILABLE_RETRY_AFTER_SECONDS);
          log.warn('dependency unavailable', describeError((error as Error).cause ?? error));
        } else {
          // Every 409 says when to retry: an earlier attempt holds what this one needs until then.
          if (status === 409) headers['Retry-After'] = String(retryAfterOf(error));
          log.info('request rejected', { status, reason: (error as Error).name });
        }
      }
      const render = options.render?.(request) ?? jsonError;
      request.response = render(status, message, headers);
    },
  };
}
