/**
 * The functions no route serves: the event pipeline on AWS (the change feed, lib/adapters/dynamodb/change-feed.ts, and
 * webhook delivery, lib/use-cases/webhook-delivery.ts). The stack builds each with the same house defaults and
 * least-privilege grants as the API's functions (from `access`, `queries`, `settings`, `kms`,
 * `webhookSecrets`), plus what its trigger and its sends need: read of the sessions table's stream,
 * `PutEvents` on the stack's bus only, `SendMessage` / receive on its queue only. The local runtime runs
 * the same library code in-process (local/events.ts) and imports none of these handlers.
 */
import type { FunctionDefinition } from './routes';
import { TABLE_ITSELF } from './routes';
import { SESSION_SCOPE_INDEXES } from './tables';

/** The queues of the pipeline. */
export type QueueKey = 'webhookDeliveries';

/** What runs a background function. */
export type BackgroundTrigger =
  /** The sessions table's stream (NEW_AND_OLD_IMAGES), records handed over in order, failures bisected. */
  | { kind: 'sessionStream' }
  /** Messages of one of the pipeline's queues, failures reported per message. */
  | { kind: 'queue'; queue: QueueKey }
  /** An EventBridge schedule. */
  | { kind: 'schedule'; everyMinutes: number };

export interface BackgroundFunctionDefinition extends FunctionDefinition {
  trigger: BackgroundTrigger;
  /** It puts events on the stack's bus (`events:PutEvents` on that bus only). */
  putsEvents?: boolean;
  /** The queues it sends to (`sqs:SendMessage` on those only). */
  sendsTo?: readonly QueueKey[];
}

/** The stream consumer's event source mapping: bounded retries, then the on-failure queue. */
export const SESSION_STREAM_SOURCE = {
  batchSize: 25,
  /** Attempts after the first, per (bisected) batch. */
  retryAttempts: 10,
  /** A record older than this goes to the on-failure queue instead of being retried again. */
  maxRecordAgeHours: 24,
} as const;

/** The delivery queue: how many messages one invocation takes, how often one is offered, how large one is. */
export const DELIVERY_QUEUE_SOURCE = {
  batchSize: 10,
  /** Receives of a message before the dead-letter queue takes it (a message failing to be handled). */
  maxReceiveCount: 5,
  /**
   * The largest message the queue takes: SQS's default (256 KiB), which the stack leaves as it is. A
   * webhook delivery carries its event's JSON, so METADATA_MAX_BYTES is bounded by it too.
   */
  maxMessageBytes: 256 * 1024,
} as const;

export const BACKGROUND_FUNCTIONS = {
  sessionStream: {
    entry: 'functions/session-stream.ts',
    description:
      'Sessions table stream: records session events, puts them on the bus, hands them to webhook delivery, queues logouts and revoke-all logout fan-outs',
    // PutItem records an event (conditional on its fixed id) and notes a created session's expiry;
    // GetItem tells a refused put that met its own earlier write. Boards: GetItem reads an ended
    // session's board, whose logout URL says whether a back-channel logout is queued. No webhook
    // endpoint is read here: each owner's event is one message the delivery worker expands.
    access: { events: ['PutItem', 'GetItem'], boards: ['GetItem'] },
    // PUBLIC_BASE_URL and BOARD_APP_URL: which boards have an application, decided as the embed page does.
    settings: ['EVENT_BUS_NAME', 'WEBHOOK_DELIVERY_QUEUE_URL', 'PUBLIC_BASE_URL', 'BOARD_APP_URL'],
    trigger: { kind: 'sessionStream' },
    putsEvents: true,
    sendsTo: ['webhookDeliveries'],
    timeoutSeconds: 60,
  },
  expirySweep: {
    entry: 'functions/expiry-sweep.ts',
    description: 'Every 5 minutes: records session.expired for the sessions that expired since',
    access: {
      // Query the due notes of a minute (the table itself), read and move the sweep's mark, record the
      // event, delete a handled note.
      events: ['Query', 'GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
      // GetItem re-reads a due session; BatchGetItem the cut-off records that could cover it.
      sessions: ['GetItem', 'BatchGetItem'],
      // An expired session's board: a back-channel logout is queued when it has a logout URL.
      boards: ['GetItem'],
    },
    queries: { events: [TABLE_ITSELF] },
    settings: ['EVENT_BUS_NAME', 'WEBHOOK_DELIVERY_QUEUE_URL', 'PUBLIC_BASE_URL', 'BOARD_APP_URL'],
    trigger: { kind: 'schedule', everyMinutes: 5 },
    putsEvents: true,
    sendsTo: ['webhookDeliveries'],
    timeoutSeconds: 240,
  },
  webhookDelivery: {
    entry: 'functions/webhook-delivery.ts',
    description:
      'Delivery queue: handed-off events expanded into webhook deliveries; one signed webhook or back-channel logout attempt per message, retries as delayed messages; revoke-all logout fan-out steps',
    // A handed-off event reads its owner's endpoints (Query of the owner's partition). Each attempt reads
    // its endpoint, or its board (a cleared logout URL is sent nothing more), and counts itself against
    // its host's rate limit (UpdateItem of that host's counter for the second). A step of
    // a revoke-all's logout fan-out reads a page of the sessions a cut-off covers from a scope index
    // (Query), those sessions again and the cut-off records that could cover them (BatchGetItem), or, for
    // an operator's cut-off of a user across tenants or of the stage, a segment of the table (Scan); and
    // raises its cut-off record's expiry to the latest of those sessions' (UpdateItem, conditional on the
    // record's revision: it never creates a record).
    access: {
      webhooks: ['GetItem', 'Query', 'UpdateItem'],
      boards: ['GetItem'],
      sessions: ['Query', 'BatchGetItem', 'Scan', 'UpdateItem'],
      signingKeys: ['GetItem'],
    },
    queries: {
      webhooks: [TABLE_ITSELF],
      sessions: [
        SESSION_SCOPE_INDEXES.orgUser,
        SESSION_SCOPE_INDEXES.creatorUser,
        SESSION_SCOPE_INDEXES.board,
      ],
    },
    // PUBLIC_BASE_URL is the logout tokens' issuer (the stack passes the API's stage URL without a
    // domain); the ID token keys sign them and derive their pairwise `sub`.
    settings: [
      'WEBHOOK_DELIVERY_QUEUE_URL',
      'WEBHOOK_SECRET_KEY',
      'PUBLIC_BASE_URL',
      'BOARD_APP_URL',
      'ID_TOKEN_KEYRING_KEY',
    ],
    webhookSecrets: true,
    // Signs logout tokens and derives their `sub` as the embed page does: decrypts the keyring's sealing
    // key once per execution environment.
    kms: ['Decrypt'],
    trigger: { kind: 'queue', queue: 'webhookDeliveries' },
    sendsTo: ['webhookDeliveries'],
    // Ten attempts side by side, each answered within 10 s, with KMS and DynamoDB around them.
    timeoutSeconds: 60,
  },
  keyRotation: {
    entry: 'functions/key-rotation.ts',
    description:
      'Every 10 minutes: the ID token keyring rotation (makes the keyring, schedules the next key, drops retired ones)',
    // Reads the keyring and writes it whole, conditionally on the version it read.
    access: { signingKeys: ['GetItem', 'PutItem'] },
    settings: ['ID_TOKEN_KEYRING_KEY'],
    // Encrypt only, when it makes the keyring: new keys are sealed to the keyring's public sealing key,
    // so the rotation never decrypts anything.
    kms: ['Encrypt'],
    trigger: { kind: 'schedule', everyMinutes: 10 },
  },
} as const satisfies Record<string, BackgroundFunctionDefinition>;

export type BackgroundFunctionName = keyof typeof BACKGROUND_FUNCTIONS;
