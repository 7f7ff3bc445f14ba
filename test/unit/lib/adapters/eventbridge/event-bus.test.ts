import { EventBridgeClient, PutEventsCommand, type PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { OPERATOR_USER_ID, revokeAllEvent } from '#lib/adapters/dynamodb/change-events';
import {
  EVENT_BUS_MAX_BYTES,
  EVENT_BUS_SOURCE,
  EventBusError,
  EventBusSink,
  eventBridgeEventBytes,
  PUT_EVENTS_MAX_ENTRIES,
  type PutEventsEntry,
  putEventsEntry,
} from '#lib/adapters/eventbridge/event-bus';
import type { RoutedEvent } from '#lib/domain/events';
import type { SessionView } from '#lib/domain/session';
import { routedEvent } from '#test/support/webhook-receiver';

const session = (n: number) =>
  ({ id: `6f1c2b4e-0000-4000-8000-${String(n).padStart(12, '0')}`, boardId: 'board-1' }) as SessionView;
const events = (count: number) =>
  Array.from({ length: count }, (_, n) => routedEvent(session(n), 'session.created', { userId: 'owner-a' }));

/** An EventBridge client whose PutEvents calls are recorded and answered by `answer`. */
function recordingBus(
  answer: (entries: Array<Record<string, unknown>>) => {
    FailedEntryCount: number;
    Entries: PutEventsResultEntry[];
  },
) {
  const calls: Array<Array<Record<string, unknown>>> = [];
  const client = new EventBridgeClient({ region: 'eu-west-1' });
  mockClient(client)
    .onAnyCommand()
    .rejects(new Error('not a PutEvents call'))
    .on(PutEventsCommand)
    .callsFake((input: { Entries?: unknown[] }) => {
      const entries = (input.Entries ?? []) as Array<Record<string, unknown>>;
      calls.push(entries);
      return answer(entries);
    });
  return { client, calls };
}

const accepted = (entries: unknown[]) => ({
  FailedEntryCount: 0,
  Entries: entries.map((_, i) => ({ EventId: `id-${i}` })),
});

describe('the event bus sink', () => {
  it('puts every event on the stack bus with its type as detail-type and the event as detail', async () => {
    const bus = recordingBus(accepted);
    const [event] = events(1);
    await new EventBusSink(bus.client, 'embed-bus').publish([event as NonNullable<typeof event>]);
    expect(bus.calls).toHaveLength(1);
    const entry = bus.calls[0]?.[0] as Record<string, unknown>;
    expect(entry).toMatchObject({
      EventBusName: 'embed-bus',
      Source: EVENT_BUS_SOURCE,
      DetailType: 'session.created',
    });
    expect(JSON.parse(entry.Detail as string)).toEqual({
      ...event?.event,
      ownerUserId: 'owner-a',
      boardId: 'board-1',
    });
  });

  it('puts a revoke-all’s sessions.revoked with its owner and board, and an operator’s with no owner', async () => {
    const bus = recordingBus(accepted);
    const notice = { scope: { boardId: 'board-1' }, revoked: 12, writtenAt: '2026-03-01T12:00:00.000Z' };
    const entry = { at: notice.writtenAt, byKeyId: null };
    const tenant = revokeAllEvent({ ...entry, id: 'e1', byUserId: 'owner-a', byKeyId: 'key_a' }, notice);
    const operator = revokeAllEvent({ ...entry, id: 'e2', byUserId: OPERATOR_USER_ID }, notice);
    await new EventBusSink(bus.client, 'embed-bus').publish([tenant, operator]);
    const [first, second] = bus.calls[0] ?? [];
    expect(first).toMatchObject({ Source: EVENT_BUS_SOURCE, DetailType: 'sessions.revoked' });
    expect(JSON.parse(String(first?.Detail))).toEqual({
      ...tenant.event,
      ownerUserId: 'owner-a',
      boardId: 'board-1',
    });
    expect(JSON.parse(String(second?.Detail))).toMatchObject({
      type: 'sessions.revoked',
      ownerUserId: null,
      data: { actor: { type: 'operator' }, revoked: 12 },
    });
  });

  it('sends at most ten entries per call', async () => {
    const bus = recordingBus(accepted);
    await new EventBusSink(bus.client, 'embed-bus').publish(events(23));
    expect(bus.calls.map((entries) => entries.length)).toEqual([
      PUT_EVENTS_MAX_ENTRIES,
      PUT_EVENTS_MAX_ENTRIES,
      3,
    ]);
  });

  it('keeps the entries of one call below 256 KB together: ten events of 30 KB metadata take two calls', async () => {
    const bus = recordingBus(accepted);
    const large = (n: number) =>
      routedEvent(
        { ...session(n), metadata: { pad: 'x'.repeat(30 * 1024) } } as SessionView,
        'session.created',
        { userId: 'owner-a' },
      );
    await new EventBusSink(bus.client, 'embed-bus').publish(Array.from({ length: 10 }, (_, n) => large(n)));
    const sizes = bus.calls.map((entries) =>
      entries.reduce((sum, entry) => sum + eventBridgeEventBytes(entry as unknown as PutEventsEntry), 0),
    );
    expect(bus.calls.map((entries) => entries.length)).toEqual([8, 2]);
    for (const size of sizes) expect(size).toBeLessThan(EVENT_BUS_MAX_BYTES);
    // Every event was put once, in order.
    expect(bus.calls.flat().map((entry) => JSON.parse(String(entry.Detail)).data.session.id)).toEqual(
      Array.from({ length: 10 }, (_, n) => session(n).id),
    );
  });

  it('measures an entry as EventBridge represents the event: its envelope, and the detail as an object', () => {
    const [event] = events(1);
    const entry = putEventsEntry('embed-bus', event as RoutedEvent);
    const represented = JSON.stringify({
      version: '0',
      id: '00000000-0000-0000-0000-000000000000',
      'detail-type': entry.DetailType,
      source: entry.Source,
      account: '000000000000',
      time: '2000-01-01T00:00:00Z',
      region: 'r'.repeat(32),
      resources: [],
      detail: JSON.parse(entry.Detail),
    });
    expect(eventBridgeEventBytes(entry)).toBe(Buffer.byteLength(represented));
  });

  it('fails the publish when the bus refuses an entry, so the stream record is retried', async () => {
    const bus = recordingBus((entries) => ({
      FailedEntryCount: 1,
      Entries: entries.map((_, i) => (i === 1 ? { ErrorCode: 'InternalFailure' } : { EventId: `id-${i}` })),
    }));
    const published = new EventBusSink(bus.client, 'embed-bus').publish(events(3));
    await expect(published).rejects.toBeInstanceOf(EventBusError);
    await expect(published).rejects.toThrow(/InternalFailure/);
  });

  it('fails when the bus answers fewer entries than it was sent', async () => {
    const bus = recordingBus(() => ({ FailedEntryCount: 0, Entries: [] }));
    await expect(new EventBusSink(bus.client, 'embed-bus').publish(events(2))).rejects.toBeInstanceOf(
      EventBusError,
    );
  });
});
