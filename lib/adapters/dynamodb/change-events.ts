import { createHash } from 'node:crypto';
import { cutoffEntriesOf } from '#lib/adapters/dynamodb/session-changes';
import { isSessionItem, toStoredSession } from '#lib/adapters/dynamodb/session-items';
import type { Item } from '#lib/adapters/dynamodb/table';
import { type CutoffEntry, type CutoffFanOutStart, parseCutoffScopeKey } from '#lib/domain/cutoffs';
import type { EventActor, RoutedBulkEvent, RoutedEvent, RoutedSessionEvent } from '#lib/domain/events';
import { isOperatorActor, LEGACY_OPERATOR } from '#lib/domain/operators';
import { creatorActor, expiredEvent, revocationActor, sessionEvent } from '#lib/domain/session-events';

/** How operators' revocations were recorded before each operator was named (see lib/domain/operators.ts). */
export const OPERATOR_USER_ID = LEGACY_OPERATOR;

/** What changed on one item of the sessions table, as a stream record tells it (images unmarshalled). */
export interface ItemChange {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  oldImage?: Item;
  newImage?: Item;
}

const present = (image: Item | undefined, name: string): boolean => typeof image?.[name] === 'string';

/**
 * The events one change of a sessions-table item stands for. Every attribute that appeared (absent in
 * the old image, present in the new) is one event, so a change feed that folds several writes into one
 * record (the local poller) derives the same events as a stream carrying each write:
 * - an item inserted: `session.created` (and any of the below already present);
 * - `boundAt` appeared: `session.bound`; `openedAt`: `session.opened`; `revokedAt`: `session.revoked`;
 * - an item removed (DynamoDB's TTL deletes sessions some time after `expiresAt`) that was never
 *   revoked: `session.expired`, the same event the expiry sweep emits.
 * - a cut-off record gaining an entry that carries a notice (a revoke-all call's last write):
 *   `sessions.revoked`, once per call.
 * Anything else derives nothing.
 */
export function deriveEvents(change: ItemChange, now: Date): RoutedEvent[] {
  const { oldImage, newImage } = change;
  if (newImage && change.eventName !== 'REMOVE' && cutoffEntriesOf(newImage).length > 0) {
    return revokeAllEvents(oldImage, newImage);
  }
  if (change.eventName === 'REMOVE') {
    if (!oldImage || !isSessionItem(oldImage)) return [];
    const removed = toStoredSession(oldImage);
    // Deleted before its expiry (by hand, not by TTL): no event says why, so none is made up.
    if (Date.parse(removed.expiresAt) > now.getTime()) return [];
    const expired = expiredEvent(removed);
    return expired ? [expired] : [];
  }
  if (!newImage || !isSessionItem(newImage)) return [];
  const session = toStoredSession(newImage);
  const before =
    change.eventName === 'INSERT' || !oldImage || !isSessionItem(oldImage) ? undefined : oldImage;
  const events: RoutedSessionEvent[] = [];
  if (!before)
    events.push(sessionEvent(session, 'session.created', session.createdAt, creatorActor(session)));
  if (session.boundAt !== null && !present(before, 'boundAt')) {
    events.push(sessionEvent(session, 'session.bound', session.boundAt, creatorActor(session)));
  }
  if (typeof session.openedAt === 'string' && !present(before, 'openedAt')) {
    events.push(sessionEvent(session, 'session.opened', session.openedAt, creatorActor(session)));
  }
  if (session.revokedAt !== null && !present(before, 'revokedAt')) {
    events.push(sessionEvent(session, 'session.revoked', session.revokedAt, revocationActor(session)));
  }
  return events;
}

/**
 * The `sessions.revoked` events of a cut-off record's change: one per entry that appeared carrying a
 * notice. A revoke-all call writes its notice on one entry of one record (its last write), so a call is
 * one event, with the count it answered; its other entries (the first write, the other records) derive
 * nothing.
 */
function revokeAllEvents(oldImage: Item | undefined, newImage: Item): RoutedBulkEvent[] {
  const told = new Set(
    (oldImage ? cutoffEntriesOf(oldImage) : []).filter((entry) => entry.notice).map((entry) => entry.id),
  );
  return cutoffEntriesOf(newImage).flatMap((entry) =>
    entry.notice && !told.has(entry.id) ? [revokeAllEvent(entry, entry.notice)] : [],
  );
}

/** The event id of a revoke-all: `evt_` and 128 bits of SHA-256 over the type and the cut-off entry id. */
export function revokeAllEventId(entryId: string): string {
  return `evt_${createHash('sha256')
    .update(JSON.stringify(['sessions.revoked', entryId]))
    .digest('hex')
    .slice(0, 32)}`;
}

/**
 * One revoke-all call as its event: routed to the key owner that called (an operator's to nobody's
 * endpoints: the event bus only), never carrying another tenant's data beyond the count the caller was
 * answered.
 */
export function revokeAllEvent(
  entry: CutoffEntry,
  notice: NonNullable<CutoffEntry['notice']>,
): RoutedBulkEvent {
  const operator = isOperatorActor(entry.byUserId);
  const actor: EventActor = operator
    ? { type: 'operator' }
    : entry.byKeyId !== null
      ? { type: 'api_key', keyId: entry.byKeyId }
      : { type: 'api_key' };
  return {
    event: {
      id: revokeAllEventId(entry.id),
      type: 'sessions.revoked',
      occurredAt: notice.writtenAt,
      data: { scope: { ...notice.scope }, cutoff: entry.at, revoked: notice.revoked, actor },
    },
    ownerUserId: operator ? null : entry.byUserId,
    sessionId: null,
    boardId: notice.scope.boardId ?? null,
  };
}

/**
 * The logout fan-outs one change of a cut-off record starts: one per entry that appeared in it (each
 * cut-off a revoke-all wrote into this record, announced or not), and one per entry its call moved later
 * (its last write replacing its first: for the sessions created in between), named by the record's scope
 * and the entry, with the instants it covers. Nothing for any other item, nor for an entry the old image
 * already held as it is (the same write retried, another entry written beside it, an expiry raised).
 */
export function cutoffFanOuts(change: ItemChange): CutoffFanOutStart[] {
  const { oldImage, newImage } = change;
  if (change.eventName === 'REMOVE' || !newImage) return [];
  const entries = cutoffEntriesOf(newImage);
  if (entries.length === 0) return [];
  const scope =
    typeof newImage.cutoffScope === 'string' ? parseCutoffScopeKey(newImage.cutoffScope) : undefined;
  if (!scope) return [];
  const before = new Map((oldImage ? cutoffEntriesOf(oldImage) : []).map((entry) => [entry.id, entry.at]));
  return entries.flatMap((entry): CutoffFanOutStart[] => {
    const was = before.get(entry.id);
    if (was === undefined) return [{ scope, entryId: entry.id, at: entry.at }];
    return was < entry.at ? [{ scope, entryId: entry.id, at: entry.at, since: was }] : [];
  });
}
