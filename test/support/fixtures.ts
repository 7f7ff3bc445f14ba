import type { Board } from '#lib/domain/board';
import { SPEC_SESSION_FIELDS as SPEC_VIEW_FIELDS, type StoredSession } from '#lib/domain/session';

/**
 * Shared test data: the request bodies and field lists the spec defines, written once so a change to
 * the contract is a change in one place.
 */

const [idField, boardIdField, ...afterBoardId] = SPEC_VIEW_FIELDS;

/**
 * The fields of the spec's embed session, as the create response carries them: the service's list with
 * the token in its place. A unit test (test/unit/lib/domain/session.test.ts) holds that list to the
 * spec document's, so a field dropped there fails the tests instead of changing their oracle.
 */
export const SPEC_SESSION_FIELDS = [idField, boardIdField, 'token', ...afterBoardId] as const;

/**
 * The session in the create response: the spec's fields, then its status and revocation time, whether it
 * binds to a browser and when it was bound.
 */
export const SESSION_FIELDS = [
  ...SPEC_SESSION_FIELDS,
  'status',
  'revokedAt',
  'bindToBrowser',
  'boundAt',
] as const;

/** The session everywhere else (retrieve, list, revoke): the same fields without the token. */
export const SESSION_VIEW_FIELDS = SESSION_FIELDS.filter((field) => field !== 'token');

/** The session fields the embed page hands to the board's front end: the spec's, without the token. */
export const EMBED_CONTEXT_SESSION_FIELDS = SPEC_SESSION_FIELDS.filter((field) => field !== 'token');

/** How omitted (or null) optional fields come back. */
export const OMITTED_OPTIONALS = {
  firstName: null,
  lastName: null,
  avatarUrl: null,
  plan: null,
  metadata: {},
  bindToBrowser: false,
} as const;

/** The spec's default lifetime: 30 days. */
export const DEFAULT_LIFETIME_SECONDS = 2_592_000;

/** A user of the caller's product as a session describes them: every user field set. */
export const ADA_PROFILE = {
  userId: 'customer-42',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  avatarUrl: 'https://cdn.example.com/ada.png',
  plan: 'pro',
} as const;

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

/** A stored session with every field set to something plausible, `overrides` on top. */
export function storedSession(overrides: Partial<StoredSession> = {}): StoredSession {
  return {
    id: '3f2c1e0a-0000-4000-8000-000000000001',
    boardId: 'board-public',
    orgId: 'org-a',
    // The board's organization unless the test says whose user it is (as for a member's session).
    tenant: { kind: 'organization', id: overrides.orgId ?? 'org-a' },
    tokenHash: 'a'.repeat(64),
    userId: 'customer-42',
    email: 'ada@example.com',
    firstName: 'Ada',
    lastName: null,
    avatarUrl: null,
    plan: 'pro',
    metadata: { team: 'analytics' },
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-31T00:00:00.000Z',
    createdByUserId: 'owner-1',
    createdByKeyId: 'key_0123456789abcdef01234567',
    revokedAt: null,
    revokedByUserId: null,
    revokedByKeyId: null,
    bindToBrowser: false,
    bindingHash: null,
    boundAt: null,
    ...overrides,
  };
}

/** A public board with an application of its own and a back-channel logout URL. */
export const APP_BOARD: Board = {
  boardId: 'board-1',
  orgId: 'org-a',
  visibility: 'PUBLIC',
  name: null,
  appUrl: 'https://board.acme.com/handoff',
  logoutUrl: 'https://board.acme.com/backchannel-logout',
};
