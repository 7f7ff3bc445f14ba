/**
 * The webhook hand-off's speed goal: one event of an owner at the endpoint cap (16) is handed from the
 * shared pipeline to delivery in ≤ 1 s when every SQS call takes 15 ms. The real sink and the real SQS
 * scheduler run, through the SDK's whole pipeline (serialization, signing, retries), against a stub
 * transport that answers each call after the given latency; the endpoints are read from an in-memory
 * repository. Also measured: a stream batch of 25 events of 25 owners, and the delivery worker's
 * expansion of one hand-off into its 16 first attempts. (The unit tests count the calls: one for an
 * owner with 4,000 endpoints too, where the sink of before took 63 s.)
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsDeliveryScheduler } from '#lib/adapters/sqs/delivery-queue';
import { EVENT_TYPES, eventSequence, type RoutedEvent } from '#lib/domain/events';
import type { WebhookRepository } from '#lib/domain/ports';
import { MAX_WEBHOOK_ENDPOINTS_PER_OWNER, type WebhookEndpoint } from '#lib/domain/webhook';
import { expandHandOff, WebhookSink } from '#lib/use-cases/webhook-delivery';
import { quantile } from './measure';

/** The SQS latency the goal is stated for. */
export const SQS_STUB_LATENCY_MS = 15;
/** The goal: one event of an owner at the cap handed off within this long. */
export const HAND_OFF_GOAL_MS = 1_000;

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';

/** An SQS client whose every call is answered after `latencyMs`, counting the calls. */
function stubbedSqs(latencyMs: number): { client: SQSClient; calls: () => number } {
  let calls = 0;
  const client = new SQSClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' },
    requestHandler: {
      handle: async (request: { body?: unknown; headers: Record<string, string> }) => {
        calls += 1;
        await sleep(latencyMs);
        // As SQS answers: each message's id and the MD5 of its body, which the SDK checks.
        const input = JSON.parse(new TextDecoder().decode(request.body as Uint8Array)) as {
          Entries?: Array<{ Id: string; MessageBody: string }>;
          MessageBody?: string;
        };
        const md5 = (text = '') => createHash('md5').update(text).digest('hex');
        const answer = input.Entries
          ? {
              Successful: input.Entries.map(({ Id, MessageBody }) => ({
                Id,
                MessageId: `m-${Id}`,
                MD5OfMessageBody: md5(MessageBody),
              })),
              Failed: [],
            }
          : { MessageId: 'm', MD5OfMessageBody: md5(input.MessageBody) };
        return {
          response: {
            statusCode: 200,
            headers: { 'content-type': 'application/x-amz-json-1.0' },
            body: Readable.from([Buffer.from(JSON.stringify(answer))]),
          },
        };
      },
    } as never,
  });
  return { client, calls: () => calls };
}

function endpointsOf(owner: string, count: number): WebhookEndpoint[] {
  return Array.from({ length: count }, (_, n) => ({
    id: `whe_${String(n).padStart(32, '0')}`,
    ownerUserId: owner,
    url: `https://hooks-${n}.example.com/in`,
    events: [...EVENT_TYPES],
    description: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    createdByKeyId: 'key_0123456789abcdef01234567',
  }));
}

function repository(endpoints: WebhookEndpoint[]): WebhookRepository {
  return {
    create: async (endpoint) => endpoint,
    get: async (owner, id) => endpoints.find((e) => e.ownerUserId === owner && e.id === id),
    list: async (owner) => endpoints.filter((e) => e.ownerUserId === owner),
    delete: async () => false,
    rotateSecret: async () => undefined,
  };
}

function createdEvent(owner: string, n: number): RoutedEvent {
  const sessionId = `6f1c2b4e-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return {
    event: {
      id: `evt_${sessionId.replaceAll('-', '')}_1`,
      type: 'session.created',
      occurredAt: '2026-03-01T12:00:00.000Z',
      sequence: eventSequence('session.created'),
      data: { session: { id: sessionId, boardId: 'board-1' } as never, actor: { type: 'api_key' } },
    },
    ownerUserId: owner,
    sessionId,
    boardId: 'board-1',
    tenant: { kind: 'keyOwner', id: owner },
  } as RoutedEvent;
}

export interface HandOffCase {
  name: string;
  /** Median and slowest of the runs (ms), and the SQS calls one run makes. */
  medianMs: number;
  maxMs: number;
  sqsCalls: number;
}

async function timed(runs: number, once: () => Promise<number>): Promise<Omit<HandOffCase, 'name'>> {
  const ms: number[] = [];
  let sqsCalls = 0;
  await once(); // warm-up: the SDK's first call builds its pipeline
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    sqsCalls = await once();
    ms.push(performance.now() - start);
  }
  return { medianMs: quantile(ms, 0.5), maxMs: Math.max(...ms), sqsCalls };
}

/** Runs every case `runs` times with a `latencyMs` SQS stub. */
export async function measureHandOff(runs: number, latencyMs = SQS_STUB_LATENCY_MS): Promise<HandOffCase[]> {
  const clock = { now: () => new Date() };
  // The sink reads no endpoint: how many the owner has (16 here, or 4,000) cannot change its time.
  const handOff = (events: RoutedEvent[]) => async () => {
    const sqs = stubbedSqs(latencyMs);
    await new WebhookSink({ handOffs: new SqsDeliveryScheduler(sqs.client, QUEUE_URL, clock) }).publish(
      events,
    );
    return sqs.calls();
  };
  const expansion = async () => {
    const sqs = stubbedSqs(latencyMs);
    const event = createdEvent('owner-a', 1);
    await expandHandOff(
      {
        webhooks: repository(endpointsOf('owner-a', MAX_WEBHOOK_ENDPOINTS_PER_OWNER)),
        deliveries: new SqsDeliveryScheduler(sqs.client, QUEUE_URL, clock),
        clock,
      },
      {
        eventId: event.event.id,
        ownerUserId: 'owner-a',
        type: 'session.created',
        body: JSON.stringify(event.event),
      },
    );
    return sqs.calls();
  };
  const one = [createdEvent('owner-a', 1)];
  const batch = Array.from({ length: 25 }, (_, n) => createdEvent(`owner-${n}`, n));
  return [
    {
      name: `one event, owner at the cap (${MAX_WEBHOOK_ENDPOINTS_PER_OWNER} endpoints)`,
      ...(await timed(runs, handOff(one))),
    },
    { name: 'a stream batch: 25 events of 25 owners', ...(await timed(runs, handOff(batch))) },
    {
      name: `the worker expands one hand-off into ${MAX_WEBHOOK_ENDPOINTS_PER_OWNER} first attempts`,
      ...(await timed(runs, expansion)),
    },
  ];
}
