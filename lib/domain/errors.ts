import type { Board } from './board';
import { MIN_RETRY_AFTER_SECONDS } from './retry-after';

/**
 * Domain errors. They carry no HTTP knowledge: `lib/adapters/http/middlewares/http-errors.ts` maps each class to a status,
 * in one place, so a use case never decides how its failure looks on the wire.
 */

/** Base class so the error middleware can tell expected failures from bugs. */
export abstract class DomainError extends Error {
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The request body or a parameter breaks a validation rule; the message names the field. */
export class ValidationError extends DomainError {}

/** The body is not declared as JSON. */
export class UnsupportedMediaTypeError extends DomainError {}

/** The body is larger than the service accepts. */
export class PayloadTooLargeError extends DomainError {}

/** No board has the requested id. */
export class BoardNotFoundError extends DomainError {
  constructor(readonly boardId: string) {
    super(`Board "${boardId}" was not found`);
  }
}

/** The board is private and the API key owner is not a member of its organization. */
export class BoardAccessDeniedError extends DomainError {
  constructor(
    message = 'Sessions can only be created for public boards or boards owned by your organization',
  ) {
    super(message);
  }
}

/** No API key has this id (an operator named it). */
export class ApiKeyNotFoundError extends DomainError {
  constructor(readonly keyId: string) {
    super(`No API key has id "${keyId}"`);
  }
}

/** The API key is missing, malformed, unknown or revoked. */
export class InvalidApiKeyError extends DomainError {}

/**
 * The request carries no API key at all: no `Authorization` header, or one with another scheme than
 * `Bearer`. An invalid key of a kind, told apart so the caller learns how to send one.
 */
export class MissingApiKeyError extends InvalidApiKeyError {}

/** The embed request carries no token. */
export class MissingTokenError extends DomainError {
  constructor() {
    super('The embed link has no token');
  }
}

/** The embed token is malformed or belongs to no session. */
export class InvalidTokenError extends DomainError {
  constructor() {
    super('This embed link is not valid');
  }
}

/**
 * The session exists but its expiresAt has passed. Refusals of a known session carry its board, when it
 * still exists, so the refusal is framed under the board's own rules.
 */
export class SessionExpiredError extends DomainError {
  constructor(readonly board?: Board) {
    super('This embed session has expired. Ask the site that showed it to reload it.');
  }
}

/** The session was revoked by the site that created it, or by an operator. */
export class SessionRevokedError extends DomainError {
  constructor(readonly board?: Board) {
    super('This embed session has been revoked');
  }
}

/** The session is bound to a browser (`bindToBrowser`) and this request does not come from it. */
export class SessionBoundElsewhereError extends DomainError {
  constructor(readonly board?: Board) {
    super('This embed link was already opened in another browser');
  }
}

/**
 * No session with this id that the caller may see. One message whether it does not exist or belongs to
 * someone else, so ids cannot be probed.
 */
export class SessionNotFoundError extends DomainError {
  constructor() {
    super('No session with this id was found');
  }
}

/** No webhook endpoint with this id that the caller owns: one answer whether it exists or not. */
export class WebhookNotFoundError extends DomainError {
  constructor() {
    super('No webhook endpoint with this id was found');
  }
}

/** Other rotations of the endpoint's secret kept landing first; the caller may retry. */
export class WebhookRotationConflictError extends DomainError {
  constructor() {
    super('The secret of this webhook endpoint is being rotated by another request; retry shortly');
  }
}

/** The key owner has as many webhook endpoints as one may have; a create waits for a delete. */
export class WebhookLimitReachedError extends DomainError {
  constructor(readonly maxPerOwner: number) {
    super(
      `An API key owner has at most ${maxPerOwner} webhook endpoints: delete one before creating another`,
    );
  }
}

/** The session's board was deleted after the session was created. */
export class EmbeddedBoardGoneError extends DomainError {
  constructor() {
    super('The board of this embed session no longer exists');
  }
}

/**
 * A request with this Idempotency-Key is still being processed; the client may retry after
 * `retryAfterSeconds`, when that request's lease on the key has ended.
 */
export class IdempotencyConflictError extends DomainError {
  constructor(readonly retryAfterSeconds = MIN_RETRY_AFTER_SECONDS) {
    super('A request with this Idempotency-Key is still in progress; retry shortly');
  }
}

/** This Idempotency-Key was used for a different request (another body, or another API key of the owner). */
export class IdempotencyKeyReusedError extends DomainError {}

/**
 * A service the request needs (DynamoDB, KMS) stayed unreachable, failing or throttled after the client's
 * retries; the caller may retry later.
 */
export class DependencyUnavailableError extends DomainError {
  constructor(
    options?: { cause?: unknown },
    message = 'The service is temporarily unavailable; retry shortly',
  ) {
    super(message, options);
  }
}

/** DynamoDB stayed unavailable or throttled after the SDK's retries; the client may retry later. */
export class StorageUnavailableError extends DependencyUnavailableError {}

/**
 * Other writes kept reaching a revocation cut-off record first (many revoke-alls of one selection at the
 * same moment): this write was not made; it may be retried.
 */
export class CutoffContentionError extends StorageUnavailableError {}

/**
 * A revoke-all could not write every one of its cut-offs, and undid those it had written: nothing was
 * revoked. The call can be retried as it was.
 */
export class RevocationNotRecordedError extends DependencyUnavailableError {
  constructor(options?: { cause?: unknown }) {
    super(
      options,
      'Nothing was revoked: the revocation could not be recorded (storage busy or unavailable); retry the call',
    );
  }
}

/**
 * A revoke-all wrote its first cut-offs (every session of the selection created up to `cutoff` is
 * revoked), then could not count or write its last ones: the sessions created while it ran may not be
 * covered, and it has no count to give. Retrying covers those and counts what is left.
 */
export class RevocationUnfinishedError extends DependencyUnavailableError {
  constructor(
    readonly cutoff: string,
    options?: { cause?: unknown },
  ) {
    super(
      options,
      `The sessions of the selection created up to ${cutoff} were revoked, but the call could not finish ` +
        '(storage busy or unavailable): retry it to revoke those created since and to get the count',
    );
  }
}

/**
 * A revoke-all could write only some of its first cut-offs and could not undo them: part of the
 * selection may be revoked. Retrying the call revokes all of it.
 */
export class RevocationPartlyRecordedError extends DependencyUnavailableError {
  constructor(options?: { cause?: unknown }) {
    super(
      options,
      'Part of the selection may have been revoked: the revocation could not be recorded everywhere, nor ' +
        'undone (storage busy or unavailable); retry the call to revoke all of it',
    );
  }
}

/**
 * Storage failed while binding a link to this browser and the binding could not be undone: it may have
 * been written. The answer is a 503 that still gives the browser `bindingSecret` (the cookie), so that a
 * binding left behind belongs to this browser.
 */
export class UnconfirmedBindingError extends StorageUnavailableError {
  constructor(
    readonly bindingSecret: string,
    options?: { cause?: unknown },
  ) {
    super(options);
  }
}
