import type { EmbedErrorCode } from '#lib/adapters/http/embed/i18n';
import * as errors from '#lib/domain/errors';

/**
 * Every refusal the embed page makes, with the code it is known by (the page's text, its JSON answer, the
 * host script's event). Written here rather than read from lib/adapters/http/embed, so a code changed there fails the
 * tests instead of changing their oracle.
 */
export const EMBED_REFUSALS: readonly (readonly [EmbedErrorCode, Error])[] = [
  ['missing_token', new errors.MissingTokenError()],
  ['invalid_token', new errors.InvalidTokenError()],
  ['session_expired', new errors.SessionExpiredError()],
  ['session_revoked', new errors.SessionRevokedError()],
  ['bound_to_another_browser', new errors.SessionBoundElsewhereError()],
  ['board_gone', new errors.EmbeddedBoardGoneError()],
  ['unavailable', new errors.StorageUnavailableError()],
];
