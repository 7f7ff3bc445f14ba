import type { KeyOwner } from '#lib/domain/api-key';
import type { DestinationPolicy } from '#lib/domain/destinations';
import { ValidationError, WebhookNotFoundError, WebhookRotationConflictError } from '#lib/domain/errors';
import type { EventType } from '#lib/domain/events';
import type { Clock, RandomSource, WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import {
  ALL_EVENT_TYPES,
  currentSecretVersion,
  isWebhookId,
  MAX_WEBHOOK_ENDPOINTS_PER_OWNER,
  newWebhookId,
  toWebhookView,
  WEBHOOK_SECRET_OVERLAP_SECONDS,
  type WebhookEndpoint,
  type WebhookView,
  webhookUrlProblem,
} from '#lib/domain/webhook';
import type { ListCaller } from './list-sessions';
import { type CursorFormat, decodeSignedCursor, encodeSignedCursor } from './signed-cursor';

export interface WebhookDeps {
  webhooks: WebhookRepository;
  secrets: WebhookSecrets;
  clock: Clock;
  random: RandomSource;
}

/** A validated create request: events absent means every type. */
export interface CreateWebhookRequest {
  url: string;
  events?: readonly EventType[];
  description?: string | null;
}

export interface CreateWebhookCommand {
  keyOwner: KeyOwner;
  request: CreateWebhookRequest;
  /** Where endpoints may point: public internet hosts (loopback too where the local operator allows it). */
  destinations: DestinationPolicy;
  /** The endpoint id fixed when the request's Idempotency-Key was claimed; drawn now otherwise. */
  id?: string;
}

export interface CreatedWebhook {
  webhook: WebhookView;
  /** Shown once, here: derived from the endpoint id, never stored. */
  secret: string;
}

/**
 * Creates an endpoint for the key owner and answers its signing secret. One conditional put: a retry with
 * the same reserved id meets its own earlier write and answers it, so a create whose answer was lost never
 * leaves two endpoints.
 */
export async function createWebhook(
  deps: WebhookDeps,
  command: CreateWebhookCommand,
): Promise<CreatedWebhook> {
  const { request } = command;
  const problem = webhookUrlProblem(request.url, command.destinations);
  if (problem !== undefined) throw new ValidationError(problem);
  const events = request.events
    ? ALL_EVENT_TYPES.filter((type) => request.events?.includes(type))
    : [...ALL_EVENT_TYPES];
  const endpoint: WebhookEndpoint = {
    id: command.id ?? newWebhookId(deps.random.uuid()),
    ownerUserId: command.keyOwner.userId,
    url: request.url,
    events,
    description: request.description ?? null,
    createdAt: deps.clock.now().toISOString(),
    createdByKeyId: command.keyOwner.keyId,
  };
  const stored = await deps.webhooks.create(endpoint, { maxPerOwner: MAX_WEBHOOK_ENDPOINTS_PER_OWNER });
  return { webhook: toWebhookView(stored), secret: await deps.secrets.secretOf(stored.id) };
}

export const DEFAULT_WEBHOOK_LIMIT = 20;

/** GET /api/embed/webhooks: a page size, and where the previous page ended. */
export interface ListWebhooksQuery {
  limit: number;
  cursor?: string;
}

export interface WebhookPage {
  data: WebhookView[];
  nextCursor: string | null;
}

/**
 * One page of the key owner's endpoints, without secrets, oldest first (by `createdAt`, then id). The
 * owner has at most MAX_WEBHOOK_ENDPOINTS_PER_OWNER of them, so every page reads them all and cuts its
 * slice: the cursor is the place of the last endpoint answered, signed for the caller's API key as the
 * session listing's, so an endpoint created or deleted between pages neither repeats nor shifts another.
 */
export async function listWebhooks(
  deps: Pick<WebhookDeps, 'webhooks'>,
  caller: ListCaller,
  query: ListWebhooksQuery,
): Promise<WebhookPage> {
  const after =
    query.cursor === undefined ? undefined : decodeSignedCursor(WEBHOOKS_CURSOR, query.cursor, caller, query);
  const endpoints = (await deps.webhooks.list(caller.userId)).filter(
    (endpoint) => after === undefined || positionOf(endpoint) > after,
  );
  const page = endpoints.slice(0, query.limit);
  const last = page.at(-1);
  return {
    data: page.map(toWebhookView),
    nextCursor:
      endpoints.length > query.limit && last !== undefined
        ? encodeSignedCursor(WEBHOOKS_CURSOR, positionOf(last), caller, query)
        : null,
  };
}

/** `createdAt#id`: an endpoint's place in its owner's listing, oldest first. */
function positionOf(endpoint: Pick<WebhookEndpoint, 'createdAt' | 'id'>): string {
  return `${endpoint.createdAt}#${endpoint.id}`;
}

const WEBHOOKS_CURSOR: CursorFormat<ListWebhooksQuery> = {
  version: 1,
  position: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#whe_[0-9a-f]{32}$/,
  salt: 'webhooks-cursor',
  info: 'embed-session webhooks cursor v1',
  // Nothing selects: a cursor is bound to its caller alone.
  boundTo: (caller) => JSON.stringify([caller.userId]),
};

/**
 * Deletes one of the key owner's endpoints; another owner's id, or none, is not found. Idempotent: a
 * repeat of a delete (its answer lost, or a 503 after it landed) answers as the delete did.
 */
export async function deleteWebhook(
  deps: Pick<WebhookDeps, 'webhooks' | 'clock'>,
  keyOwner: KeyOwner,
  id: string,
): Promise<void> {
  const deletedAt = deps.clock.now().toISOString();
  if (!isWebhookId(id) || !(await deps.webhooks.delete(keyOwner.userId, id, deletedAt))) {
    throw new WebhookNotFoundError();
  }
}

export interface RotatedWebhookSecret {
  webhook: WebhookView;
  /** The new secret, shown once, here: derived from the endpoint id and its new version, never stored. */
  secret: string;
  /** Until when the replaced secret signs too (a second signature on each delivery); now when 0 was asked. */
  previousSecretExpiresAt: string;
}

/** Rotations that met another rotation of the same endpoint before this one gives up (409). */
const ROTATION_ATTEMPTS = 3;

/**
 * Gives one of the key owner's endpoints a new signing secret and answers it once. The replaced secret
 * keeps signing for `overlapSeconds` (default a day, at most a week; 0: not at all), each delivery then
 * carrying both signatures, so receivers can switch at their pace; after it only the new secret signs.
 * One conditional write, named by a rotation id: a write whose answer was lost is recognised on the
 * re-read, and a request retried with its Idempotency-Key (whose claim fixed `rotationId`) after a 503
 * finds its rotation landed and answers it rather than rotating again. Rotating again during an overlap
 * replaces the overlap: the secret before it stops at once. Another owner's id, or none, is not found.
 */
export async function rotateWebhookSecret(
  deps: Pick<WebhookDeps, 'webhooks' | 'secrets' | 'clock' | 'random'>,
  keyOwner: KeyOwner,
  id: string,
  options: { overlapSeconds?: number; rotationId?: string } = {},
): Promise<RotatedWebhookSecret> {
  const overlapSeconds = options.overlapSeconds ?? WEBHOOK_SECRET_OVERLAP_SECONDS.default;
  if (
    !Number.isInteger(overlapSeconds) ||
    overlapSeconds < 0 ||
    overlapSeconds > WEBHOOK_SECRET_OVERLAP_SECONDS.max
  )
    throw new ValidationError(
      `overlapSeconds must be a whole number of seconds from 0 to ${WEBHOOK_SECRET_OVERLAP_SECONDS.max}`,
    );
  if (!isWebhookId(id)) throw new WebhookNotFoundError();
  const rotationId = options.rotationId ?? deps.random.uuid();
  const answer = async (rotated: WebhookEndpoint, previousUntil: string): Promise<RotatedWebhookSecret> => ({
    webhook: toWebhookView(rotated),
    secret: await deps.secrets.secretOf(rotated.id, currentSecretVersion(rotated)),
    previousSecretExpiresAt: rotated.previousSecret?.until ?? previousUntil,
  });
  for (let attempt = 0; attempt < ROTATION_ATTEMPTS; attempt += 1) {
    const endpoint = await deps.webhooks.get(keyOwner.userId, id);
    if (!endpoint) throw new WebhookNotFoundError();
    if (endpoint.secretRotationId === rotationId) return answer(endpoint, deps.clock.now().toISOString());
    const previousUntil = new Date(deps.clock.now().getTime() + overlapSeconds * 1000).toISOString();
    const rotated = await deps.webhooks.rotateSecret(keyOwner.userId, id, {
      from: currentSecretVersion(endpoint),
      previousUntil,
      rotationId,
    });
    if (rotated === undefined) throw new WebhookNotFoundError();
    if (rotated === 'conflict') continue;
    return answer(rotated, previousUntil);
  }
  throw new WebhookRotationConflictError();
}
