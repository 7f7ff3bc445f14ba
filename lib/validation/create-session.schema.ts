/**
 * JSON Schema of the create-session request body. It is compiled ahead of time into
 * `create-session.validator.generated.js` (`npm run build:validators`), so no schema is compiled in
 * Lambda at all; a unit test fails when the generated file is stale.
 */
import { MAX_ID_LENGTH } from '#lib/domain/ids';

const id = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, pattern: '\\S' } as const;
const optionalText = { type: ['string', 'null'], maxLength: 256 } as const;

/** Practical e-mail syntax: local part, "@", a dotted domain of letters, digits and hyphens. */
export const EMAIL_PATTERN =
  "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$";

/**
 * An absolute http(s) URL with a host and no whitespace or control character anywhere (browsers would
 * silently strip or re-encode them); `new URL` confirms the rest after the schema passes.
 */
export const HTTP_URL_PATTERN =
  '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\\x00-\\x1f\\x7f/?#]+(?:[/?#][^\\s\\x00-\\x1f\\x7f]*)?$';

export const createSessionSchema = {
  $id: 'create-session-request',
  type: 'object',
  additionalProperties: false,
  required: ['boardId', 'userId', 'email'],
  properties: {
    boardId: id,
    userId: id,
    email: { type: 'string', maxLength: 254, pattern: EMAIL_PATTERN },
    firstName: optionalText,
    lastName: optionalText,
    avatarUrl: { type: ['string', 'null'], maxLength: 2048, pattern: HTTP_URL_PATTERN },
    plan: optionalText,
    metadata: { type: ['object', 'null'] },
    expiresInSeconds: { type: ['integer', 'null'], minimum: 1 },
  },
} as const;
