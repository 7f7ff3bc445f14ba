/**
 * The admin CLI's webhook commands: operators list and delete endpoints (any tenant's), and `listen`
 * forwards a local runtime's events to a URL for development, as `stripe listen` does.
 */
import { once } from 'node:events';
import { DynamoWebhookRepository } from '#lib/adapters/dynamodb/webhooks';
import { toWebhookView, type WebhookView } from '#lib/domain/webhook';
import type { AdminCommand, AdminContext } from './command';

/** Every endpoint, or one owner's, with its owner; never a secret (none is stored). */
export async function listWebhooksAsOperator(
  webhooks: DynamoWebhookRepository,
  ownerUserId: string | undefined,
): Promise<Array<WebhookView & { ownerUserId: string; createdByKeyId: string }>> {
  const endpoints = ownerUserId === undefined ? await webhooks.listAll() : await webhooks.list(ownerUserId);
  return endpoints.map((e) => ({
    ...toWebhookView(e),
    ownerUserId: e.ownerUserId,
    createdByKeyId: e.createdByKeyId,
  }));
}

/** Deletes an owner's endpoint; it receives nothing more. */
export async function deleteWebhookAsOperator(
  webhooks: DynamoWebhookRepository,
  ownerUserId: string,
  id: string,
): Promise<{ deleted: boolean; id: string }> {
  return { deleted: await webhooks.delete(ownerUserId, id, new Date().toISOString()), id };
}

export interface ListenOptions {
  /** The running service, `http://127.0.0.1:3000` by default. */
  baseUrl: string;
  /** An API key: the events of the sessions its owner creates are forwarded. */
  apiKey: string;
  forwardTo: string;
  events?: readonly string[];
}

/**
 * Registers `forwardTo` as an endpoint of the key's owner through the API (so the service itself signs
 * and retries every delivery), prints its secret once, and deletes the endpoint when `until` aborts
 * (Ctrl-C): nothing is left behind.
 */
export async function listen(
  options: ListenOptions,
  io: { print: (line: string) => void; until: AbortSignal; fetch?: typeof fetch },
): Promise<{ forwardedTo: string; endpointId: string; deleted: boolean }> {
  const send = io.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  // A service that is not running is named with its URL, not reported as "fetch failed".
  const call: typeof fetch = async (url, init) => {
    try {
      return await send(url, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new Error(`cannot reach the service at ${base} (--base-url): ${reason}. Is it running?`);
    }
  };
  const auth = { Authorization: `Bearer ${options.apiKey}` };
  const created = await call(`${base}/api/embed/webhooks`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      url: options.forwardTo,
      description: 'admin listen',
      ...(options.events?.length ? { events: options.events } : {}),
    }),
  });
  const answer = (await created.json()) as { webhook?: { id: string }; secret?: string; message?: string };
  if (created.status !== 201 || !answer.webhook || !answer.secret) {
    throw new Error(
      `the service refused the endpoint (${created.status}): ${answer.message ?? 'no message'}`,
    );
  }
  const { id } = answer.webhook;
  io.print(`Forwarding events to ${options.forwardTo} (endpoint ${id}). Ctrl-C to stop.`);
  io.print(`Signing secret: ${answer.secret}`);
  // Nothing else keeps the process alive while it waits (the service delivers, not this process): without
  // a timer Node would end here, mid-await, and leave the endpoint behind.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    if (!io.until.aborted) await once(io.until, 'abort');
  } finally {
    clearInterval(keepAlive);
  }
  const deleted = await call(`${base}/api/embed/webhooks/${id}`, { method: 'DELETE', headers: auth });
  return { forwardedTo: options.forwardTo, endpointId: id, deleted: deleted.status === 204 };
}

/** Aborts on the first Ctrl-C (SIGINT) or SIGTERM. */
function interrupted(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return controller.signal;
}

const webhooks = ({ db, table }: AdminContext) => new DynamoWebhookRepository(db, table('webhooks'));

/** The webhook commands, as entries of the admin CLI's table of commands. */
export const WEBHOOK_COMMANDS: AdminCommand[] = [
  {
    name: 'list-webhooks',
    options: ['user'],
    usage: ['list-webhooks [--user <userId>]                    never prints secrets (none is stored)'],
    run: async (context) => ({
      webhooks: await listWebhooksAsOperator(webhooks(context), context.values.user),
    }),
  },
  {
    name: 'delete-webhook',
    options: ['user', 'id'],
    usage: ['delete-webhook --user <userId> --id <webhookId>'],
    run: (context) => deleteWebhookAsOperator(webhooks(context), context.need('user'), context.need('id')),
  },
  {
    name: 'listen',
    options: ['forward-to', 'api-key', 'base-url', 'events'],
    storage: false,
    usage: [
      'listen --forward-to <url> --api-key <key> [--base-url <url>] [--events <type,type,…>]',
      "                                                   forwards the key owner's session events (signed,",
      '                                                   secret printed once) until Ctrl-C; a URL on this',
      '                                                   machine needs the runtime started with',
      '                                                   WEBHOOK_ALLOW_LOOPBACK=1',
    ],
    run: ({ values, need }) =>
      listen(
        {
          baseUrl: values['base-url'] ?? 'http://127.0.0.1:3000',
          apiKey: need('api-key'),
          forwardTo: need('forward-to'),
          ...(values.events ? { events: values.events.split(',').map((type) => type.trim()) } : {}),
        },
        { print: (line) => process.stderr.write(`${line}\n`), until: interrupted() },
      ),
  },
];
