/**
 * Session events: what happened to a session, told to the tenant that created it (webhooks, the events
 * API, the stage's event bus). Events are derived from the changes of the session items themselves (a
 * DynamoDB stream on AWS, the same records produced locally), so no request path writes them.
 *
 * Each type happens at most once per session, so an event's identity and its place in the session's
 * order follow from the session and the type alone: a stream record delivered twice, or a consumer run
 * again, yields the same event (same id, same sequence), never a second one.
 */
import type { SessionView } from './session';
import type { Tenant } from './tenant';

export const SESSION_EVENT_TYPES = [
  'session.created',
  'session.bound',
  'session.opened',
  'session.revoked',
  'session.expired',
] as const;

export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

/**
 * Every event type: the session events, and `sessions.revoked`, the one bulk event a revoke-all (a
 * revocation cut-off) makes, whatever the number of sessions it covers.
 */
export const EVENT_TYPES = [...SESSION_EVENT_TYPES, 'sessions.revoked'] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * A session's events in the order they can happen: created, then bound (the first load of a
 * browser-bound link binds it before the page is shown), then opened, then revoked or expired (a session
 * ends once). `sequence` is the type's rank here: increasing in the order a session's events occur.
 */
export function eventSequence(type: SessionEventType): number {
  return SESSION_EVENT_TYPES.indexOf(type) + 1;
}

/** Who caused the event. Creation and opening are the key owner's and the end user's: `api_key`. */
export interface EventActor {
  type: 'api_key' | 'operator' | 'board_organization';
  keyId?: string;
}

/** An event as the events API and webhook deliveries show it. Never a token, a hash or a binding secret. */
export interface SessionEvent {
  /** `evt_` and a value fixed by the session id and the type. */
  id: string;
  type: SessionEventType;
  occurredAt: string;
  sequence: number;
  data: { session: SessionView; actor: EventActor };
}

/**
 * The selection a revoke-all named, as its caller named it: `{userId}`, `{userId, boardId}`, `{boardId}`;
 * operators also `{}`, every session of the stage.
 */
export interface RevokedScope {
  userId?: string;
  boardId?: string;
}

/**
 * `sessions.revoked`: one revoke-all call (one revocation cut-off), told once. `occurredAt` is when the
 * call wrote its cut-off; `data.cutoff` the instant up to which the scope's sessions are revoked (the
 * same for the API's calls; an operator's `--before` can lie in the past); `data.revoked` the count the
 * call answered. It names no session: the scope and the cut-off say which sessions it covers.
 */
export interface SessionsRevokedEvent {
  /** `evt_` and a value fixed by the cut-off entry: the same however often it is derived or delivered. */
  id: string;
  type: 'sessions.revoked';
  occurredAt: string;
  data: { scope: RevokedScope; cutoff: string; revoked: number; actor: EventActor };
}

/** Any event the service records and delivers. */
export type EmbedEvent = SessionEvent | SessionsRevokedEvent;

/** A session's event with what routes it: the tenant (key owner) that created the session, and the session. */
export interface RoutedSessionEvent {
  event: SessionEvent;
  /** The key owner whose key created the session: only its webhook endpoints and events API see it. */
  ownerUserId: string;
  sessionId: string;
  boardId: string;
  /**
   * Whose end user the session is for, as it recorded at creation: the subject of a back-channel logout
   * is derived from it. Routing only: never in the event a receiver sees.
   */
  tenant: Tenant;
}

/**
 * A revoke-all's event with what routes it: the key owner that called (its endpoints and events API only;
 * `null` for an operator's, which goes to the event bus alone), and the board when the scope names one.
 */
export interface RoutedBulkEvent {
  event: SessionsRevokedEvent;
  ownerUserId: string | null;
  sessionId: null;
  boardId: string | null;
}

export type RoutedEvent = RoutedSessionEvent | RoutedBulkEvent;

/**
 * Where derived events go once recorded: webhook delivery (fan-out to the owner's endpoints), the event
 * bus, back-channel logout to the board's application. Called at least once per event; implementations
 * must tolerate the same event twice (deliveries are keyed by event id and endpoint).
 */
export interface EventSink {
  publish(events: readonly RoutedEvent[]): Promise<void>;
}

/** The one-minute bucket an instant falls in: `YYYY-MM-DDTHH:MM`. */
export function minuteBucket(at: Date): string {
  return at.toISOString().slice(0, 16);
}
