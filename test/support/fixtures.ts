/**
 * Shared test data: the request bodies and field lists the spec defines, written once so a change to
 * the contract is a change in one place.
 */

/** The fields of the spec's embed session, as the create response carries them. */
export const SESSION_FIELDS = [
  'id',
  'boardId',
  'token',
  'userId',
  'email',
  'firstName',
  'lastName',
  'avatarUrl',
  'plan',
  'metadata',
  'expiresAt',
  'createdAt',
] as const;

/** The session fields the embed page hands to the board's front end: all but the token. */
export const EMBED_CONTEXT_SESSION_FIELDS = SESSION_FIELDS.filter((field) => field !== 'token');

/** How omitted (or null) optional fields come back. */
export const OMITTED_OPTIONALS = {
  firstName: null,
  lastName: null,
  avatarUrl: null,
  plan: null,
  metadata: {},
} as const;

/** The spec's default lifetime: 30 days. */
export const DEFAULT_LIFETIME_SECONDS = 2_592_000;

/** A minimal valid create-session body (the three required fields), with `overrides` on top. */
export function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { boardId: 'board-public', userId: 'customer-42', email: 'ada@example.com', ...overrides };
}

/** A create-session body with every optional field set. */
export function fullBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return validBody({
    firstName: 'Ada',
    lastName: 'Lovelace',
    avatarUrl: 'https://example.com/ada.png',
    plan: 'pro',
    metadata: { team: 'core', seats: 12, flags: ['beta'] },
    expiresInSeconds: 3600,
    ...overrides,
  });
}

/** Sorted keys of an object, for "has exactly these fields" assertions. */
export function keysOf(value: unknown): string[] {
  return Object.keys(value as object).sort();
}

/** The sorted field list, to compare with `keysOf`. */
export function sorted(fields: readonly string[]): string[] {
  return [...fields].sort();
}
