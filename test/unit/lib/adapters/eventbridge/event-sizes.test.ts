/**
 * METADATA_MAX_BYTES_CEILING against what carries a session's metadata: the largest event the pipeline
 * derives, with every other field at its longest and its worst for escaping, must fit an EventBridge entry
 * (as EventBridge represents it) and a webhook delivery message on the SQS queue, with the documented
 * margin to spare; and the ceiling is the largest whole KiB that does (it is not lower than it needs be).
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { deriveEvents, OPERATOR_USER_ID } from '#lib/adapters/dynamodb/change-events';
import { toItem } from '#lib/adapters/dynamodb/session-items';
import {
  EVENT_BUS_MAX_BYTES,
  EventBusSink,
  eventBridgeEventBytes,
  type PutEventsEntry,
} from '#lib/adapters/eventbridge/event-bus';
import { SqsDeliveryScheduler } from '#lib/adapters/sqs/delivery-queue';
import { DELIVERY_QUEUE_SOURCE } from '#lib/definitions/background';
import { EVENT_TYPES, type RoutedEvent } from '#lib/domain/events';
import { MAX_ID_LENGTH } from '#lib/domain/ids';
import type { StoredSession } from '#lib/domain/session';
import type { WebhookEndpoint } from '#lib/domain/webhook';
import {
  DEFAULT_METADATA_MAX_BYTES,
  METADATA_MAX_BYTES_CEILING,
  METADATA_SIZE_MARGIN_BYTES,
} from '#lib/platform/config';
import {
  AWS_RETRY_SECONDS,
  expandHandOff,
  type WebhookEventHandOff,
  WebhookSink,
} from '#lib/use-cases/webhook-delivery';
import { fixedClock } from '#test/support/fakes';
import { storedSession } from '#test/support/fixtures';

/** A code point JSON writes as six bytes (`\u0001`): the worst for escaping that the id rules allow. */
const ESCAPED = '\u0001';
/** The most endpoints an owner has: each delivery message names one, or a message names them all. */
const ENDPOINTS_PER_OWNER = 16;

/**
 * A session whose every field is at its longest, in the characters that take the most bytes in JSON
 * (beyond what validation even allows: ids of control characters, an avatar URL of four-byte emoji), and
 * whose metadata serializes to exactly `metadataBytes` bytes of `fill` (a plain letter, or a backslash,
 * which JSON writes as two bytes and a JSON string holding that JSON as four).
 */
function largestSession(metadataBytes: number, fill: 'a' | '\\'): StoredSession {
  const longest = ESCAPED.repeat(MAX_ID_LENGTH);
  // `{"m":""}` is eight bytes; each fill character adds one byte, or two for a backslash.
  const characters = (metadataBytes - 8) / (fill === '\\' ? 2 : 1);
  const metadata = { m: fill.repeat(characters) };
  expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(metadataBytes);
  return storedSession({
    boardId: longest,
    orgId: longest,
    userId: longest,
    email: `${'a'.repeat(64)}@${'b'.repeat(185)}.com`,
    firstName: ESCAPED.repeat(256),
    lastName: ESCAPED.repeat(256),
    avatarUrl: `https://x/${'😀'.repeat(2038)}`,
    plan: ESCAPED.repeat(256),
    metadata,
    createdByUserId: longest,
    createdByKeyId: 'key_0123456789abcdef01234567',
    revokedAt: '2026-01-02T00:00:00.000Z',
    // Another tenant's revocation names no key; the key owner's names its key: both are tried.
    revokedByUserId: longest,
    revokedByKeyId: 'key_0123456789abcdef01234567',
    bindToBrowser: true,
    bindingHash: 'b'.repeat(64),
    boundAt: '2026-01-01T00:01:00.000Z',
    openedAt: '2026-01-01T00:01:01.000Z',
  });
}

/** Every session event the pipeline derives from such a session: created to revoked, and expired. */
function largestEvents(metadataBytes: number, fill: 'a' | '\\'): RoutedEvent[] {
  const session = largestSession(metadataBytes, fill);
  const byOwner = { ...session, revokedByUserId: session.createdByUserId };
  const byOperator = { ...session, revokedByUserId: OPERATOR_USER_ID, revokedByKeyId: null };
  const now = new Date('2027-01-01T00:00:00.000Z');
  const events = [session, byOwner, byOperator].flatMap((variant) => [
    ...deriveEvents({ eventName: 'INSERT', newImage: toItem(variant) }, now),
    ...deriveEvents({ eventName: 'REMOVE', oldImage: toItem({ ...variant, revokedAt: null }) }, now),
  ]);
  const types = new Set(events.map((routed) => routed.event.type));
  // Every type that carries a session is here (sessions.revoked carries none).
  expect([...types].sort()).toEqual(EVENT_TYPES.filter((type) => type !== 'sessions.revoked').sort());
  return events;
}

/** The entries the event bus sink puts for `events`, as it sends them. */
async function busEntries(events: RoutedEvent[]): Promise<PutEventsEntry[]> {
  const entries: PutEventsEntry[] = [];
  const eventBridge = new EventBridgeClient({ region: 'eu-west-1' });
  mockClient(eventBridge)
    .on(PutEventsCommand)
    .callsFake((input: { Entries?: unknown[] }) => {
      const sent = (input.Entries ?? []) as PutEventsEntry[];
      entries.push(...sent);
      return { FailedEntryCount: 0, Entries: sent.map((_, i) => ({ EventId: `id-${i}` })) };
    });
  const sink = new EventBusSink(eventBridge, 'b'.repeat(256));
  await sink.publish(events);
  return entries;
}

/**
 * The bodies of the queue messages that carry `events` to an owner's endpoints: the hand-off, the first
 * attempts it expands into, and retries.
 */
async function deliveryMessages(events: RoutedEvent[]): Promise<string[]> {
  const bodies: string[] = [];
  const sqs = new SQSClient({ region: 'eu-west-1' });
  mockClient(sqs)
    .on(SendMessageCommand)
    .callsFake((input: { MessageBody?: string }) => {
      if (typeof input.MessageBody === 'string') bodies.push(input.MessageBody);
      return {};
    })
    .on(SendMessageBatchCommand)
    .callsFake((input: { Entries?: Array<{ MessageBody?: string }> }) => {
      for (const entry of input.Entries ?? []) if (entry.MessageBody) bodies.push(entry.MessageBody);
      return { Successful: [], Failed: [] };
    });
  const clock = fixedClock('2026-03-01T00:00:00.000Z');
  const scheduler = new SqsDeliveryScheduler(
    sqs,
    'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries',
    clock,
  );
  const endpoints: WebhookEndpoint[] = Array.from({ length: ENDPOINTS_PER_OWNER }, (_, n) => ({
    id: `whe_${String(n).padStart(32, 'f')}`,
    ownerUserId: String(events[0]?.ownerUserId),
    url: 'https://hooks.example.com/in',
    events: [...EVENT_TYPES],
    description: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    createdByKeyId: 'key_0123456789abcdef01234567',
  }));
  const webhooks = {
    create: async (e: WebhookEndpoint) => e,
    get: async (_owner: string, id: string) => endpoints.find((e) => e.id === id),
    list: async () => endpoints,
    delete: async () => true,
    rotateSecret: async () => undefined,
  };
  await new WebhookSink({ handOffs: scheduler }).publish(events);
  // The worker expands each handed-off event into its deliveries: their messages are measured too.
  for (const body of [...bodies]) {
    const { webhookEvent } = JSON.parse(body) as { webhookEvent?: WebhookEventHandOff };
    if (webhookEvent) await expandHandOff({ webhooks, deliveries: scheduler, clock }, webhookEvent);
  }
  // A retry of the last attempt waits longer than one message's delay: it carries its due time too.
  for (const body of [...bodies]) {
    const { delivery } = JSON.parse(body) as { delivery?: { attempt: number } };
    if (delivery)
      await scheduler.schedule({ ...delivery, attempt: AWS_RETRY_SECONDS.length } as never, 36_000);
  }
  return bodies;
}

const largest = (sizes: number[]) => Math.max(...sizes);
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

async function carriedBytes(metadataBytes: number) {
  const plain = largestEvents(metadataBytes, 'a');
  const escaped = largestEvents(metadataBytes, '\\');
  const entries = [...(await busEntries(plain)), ...(await busEntries(escaped))];
  const messages = [...(await deliveryMessages(plain)), ...(await deliveryMessages(escaped))];
  return {
    busEvent: largest(entries.map(eventBridgeEventBytes)),
    queueMessage: largest(messages.map(bytes)),
  };
}

const fits = (carried: { busEvent: number; queueMessage: number }) =>
  carried.busEvent <= EVENT_BUS_MAX_BYTES - METADATA_SIZE_MARGIN_BYTES &&
  carried.queueMessage <= DELIVERY_QUEUE_SOURCE.maxMessageBytes - METADATA_SIZE_MARGIN_BYTES;

describe('METADATA_MAX_BYTES_CEILING', () => {
  it('lets the largest event at the ceiling fit an EventBridge entry and a delivery message, with the margin to spare', async () => {
    const carried = await carriedBytes(METADATA_MAX_BYTES_CEILING);
    expect(carried.busEvent).toBeLessThanOrEqual(EVENT_BUS_MAX_BYTES - METADATA_SIZE_MARGIN_BYTES);
    expect(carried.queueMessage).toBeLessThanOrEqual(
      DELIVERY_QUEUE_SOURCE.maxMessageBytes - METADATA_SIZE_MARGIN_BYTES,
    );
  });

  it('is the largest whole KiB that fits: one KiB more would eat into the margin', async () => {
    expect(METADATA_MAX_BYTES_CEILING % 1024).toBe(0);
    expect(fits(await carriedBytes(METADATA_MAX_BYTES_CEILING + 1024))).toBe(false);
  });

  it('leaves the default far below it', () => {
    expect(DEFAULT_METADATA_MAX_BYTES).toBeLessThan(METADATA_MAX_BYTES_CEILING);
  });
});
