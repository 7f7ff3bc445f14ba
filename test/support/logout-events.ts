import type { SessionEventType } from '#lib/domain/events';

/**
 * Session events a back-channel logout sink is handed, as (type, board) pairs, the board left out for the
 * test's own board (one with a logout URL): its session's creation, opening, revocation and expiry, then
 * revocations on a board without a logout URL (`board-plain`) and on one that does not exist. Only the
 * revocation and the expiry on the test's board call for a logout.
 */
export const LOGOUT_CANDIDATES: readonly (readonly [SessionEventType, string?])[] = [
  ['session.created'],
  ['session.opened'],
  ['session.revoked'],
  ['session.expired'],
  ['session.revoked', 'board-plain'],
  ['session.revoked', 'board-unknown'],
];
