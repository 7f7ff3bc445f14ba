/**
 * JSON Schema of the create-session request body. It is compiled ahead of time into
 * `create-session.validator.generated.ts` (`npm run build:validators`), so no schema is compiled in
 * Lambda at all; a unit test fails when the generated file is stale.
 */

const id = { type: 'string', minLength: 1, maxLength: 256, pattern: '\\S' } as const;
const optionalText = { type: ['string', 'null'], maxLength: 256 } as const;

/** Practical e-mail syntax: local part, "@", a dotted domain of letters, digits and hyphens. */
export const EMAIL_PATTERN =
  "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$";

/** An absolute http(s) URL with a host; `new URL` confirms it after the schema passes. */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+';

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
