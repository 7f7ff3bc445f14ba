import type { EmbedEvent, EventType } from '#lib/domain/events';
import type { ListCaller } from './list-sessions';
import { type CursorFormat, decodeSignedCursor, encodeSignedCursor } from './signed-cursor';

export const DEFAULT_EVENT_LIMIT = 20;
export const MAX_EVENT_LIMIT = 100;
/**
 * Index reads one page may make. A page narrowed by `type` reads an index of exactly that type's events
 * (lib/adapters/dynamodb/events.ts), and one narrowed by session reads its session's few events (at most five), so
 * a page is one read; more only when DynamoDB's TTL deleted an event between the index read and the read
 * of the event itself. Beyond this the page comes back short, with a cursor.
 */
export const MAX_READS_PER_PAGE = 10;

/** `occurredAt#id`: an event's place in its owner's order, newest first. */
export type EventPosition = string;

/** The events store as the events API reads it (lib/adapters/dynamodb/events.ts). */
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
  let below =
    query.cursor === undefined ? undefined : decodeSignedCursor(EVENTS_CURSOR, query.cursor, caller, query);
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
  return {
    data,
    nextCursor: last !== undefined ? encodeSignedCursor(EVENTS_CURSOR, last, caller, query) : null,
  };
}

function positionOf(event: EmbedEvent): EventPosition {
  return `${event.occurredAt}#${event.id}`;
}

const EVENTS_CURSOR: CursorFormat<ListEventsQuery> = {
  version: 1,
  position: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#evt_[0-9a-f]{32}$/,
  salt: 'events-cursor',
  info: 'embed-session events cursor v1',
  boundTo: (caller, query) => JSON.stringify([caller.userId, query.sessionId ?? null, query.type ?? null]),
};
