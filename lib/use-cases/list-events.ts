import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '#lib/domain/errors';
import type { EmbedEvent, EventType } from '#lib/domain/events';
import type { ListCaller } from './list-sessions';

export const DEFAULT_EVENT_LIMIT = 20;
export const MAX_EVENT_LIMIT = 100;
/** Index reads one page may make while a `type` filter skips events; the page may then come back short. */
export const MAX_READS_PER_PAGE = 10;

/** `occurredAt#id`: an event's place in its owner's order, newest first. */
export type EventPosition = string;

/** The events store as the events API reads it (lib/dynamodb/events.ts). */
export interface EventReader {
  page(query: {
    ownerUserId: string;
    sessionId?: string;
    type?: EventType;
    below?: EventPosition;
    limit: number;
  }): Promise<{ events: EmbedEvent[]; next: EventPosition | undefined }>;
}

export interface ListEventsQuery {
  sessionId?: string;
  type?: EventType;
  limit: number;
  cursor?: string;
}

export interface EventPage {
  data: EmbedEvent[];
  nextCursor: string | null;
}

/**
 * One page of the events of the sessions the caller created (with any of its keys), newest first: the
 * events are stored under their session's creator, so no other tenant's event is ever read. The cursor is
 * the position of the last event looked at, signed for the caller's API key and this query, as the
 * session listing's.
 */
export async function listEvents(
  deps: { events: EventReader },
  caller: ListCaller,
  query: ListEventsQuery,
): Promise<EventPage> {
  let below = query.cursor === undefined ? undefined : decodeEventCursor(query.cursor, caller, query);
  const data: EmbedEvent[] = [];
  let more = false;
  for (let read = 0; read < MAX_READS_PER_PAGE; read++) {
    // One more than the page still needs, to know whether another page follows.
    const page = await deps.events.page({
      ownerUserId: caller.userId,
      ...(query.sessionId !== undefined ? { sessionId: query.sessionId } : {}),
      ...(query.type !== undefined ? { type: query.type } : {}),
      ...(below !== undefined ? { below } : {}),
      limit: query.limit - data.length + 1,
    });
    for (const event of page.events) {
      if (data.length === query.limit) {
        more = true;
        break;
      }
      data.push(event);
      below = positionOf(event);
    }
    if (more || page.next === undefined) break;
    below = page.next;
    // Out of reads with the page still short: the next page goes on from what was looked at.
    if (read === MAX_READS_PER_PAGE - 1) more = true;
  }
  const last = more ? (below ?? undefined) : undefined;
  return { data, nextCursor: last !== undefined ? encodeEventCursor(last, caller, query) : null };
}

function positionOf(event: EmbedEvent): EventPosition {
  return `${event.occurredAt}#${event.id}`;
}

const CURSOR_VERSION = 1;
const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#evt_[0-9a-f]{32}$/;
const INVALID_CURSOR = 'cursor is invalid or was issued for another query';

function signature(payload: string, caller: ListCaller, query: ListEventsQuery): Buffer {
  const key = Buffer.from(
    hkdfSync('sha256', caller.apiKey, 'events-cursor', 'embed-session events cursor v1', 32),
  );
  return createHmac('sha256', key)
    .update(payload)
    .update('\u0000')
    .update(JSON.stringify([caller.userId, query.sessionId ?? null, query.type ?? null]))
    .digest();
}

/** An opaque cursor: base64url JSON of the position, then its signature. */
export function encodeEventCursor(
  position: EventPosition,
  caller: ListCaller,
  query: ListEventsQuery,
): string {
  const payload = Buffer.from(JSON.stringify({ v: CURSOR_VERSION, p: position }), 'utf8').toString(
    'base64url',
  );
  return `${payload}.${signature(payload, caller, query).toString('base64url')}`;
}

/**
 * The position a cursor continues below. Malformed, altered, issued to another API key or for another
 * query, or spelled otherwise than the service spells it: 400.
 */
export function decodeEventCursor(cursor: string, caller: ListCaller, query: ListEventsQuery): EventPosition {
  const [payload, mac, ...rest] = cursor.split('.');
  if (!payload || !mac || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(payload + mac)) {
    throw new ValidationError(INVALID_CURSOR);
  }
  const expected = signature(payload, caller, query);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new ValidationError(INVALID_CURSOR);
  let decoded: { v?: unknown; p?: unknown } & Record<string, unknown>;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError(INVALID_CURSOR);
  }
  const { v, p, ...extra } = decoded ?? {};
  if (v !== CURSOR_VERSION || typeof p !== 'string' || !POSITION.test(p) || Object.keys(extra).length > 0) {
    throw new ValidationError(INVALID_CURSOR);
  }
  if (encodeEventCursor(p, caller, query) !== cursor) throw new ValidationError(INVALID_CURSOR);
  return p;
}
