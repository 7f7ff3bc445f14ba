import type { KeyOwner } from '#lib/domain/api-key';
import type { DestinationPolicy } from '#lib/domain/destinations';
import { ValidationError, WebhookNotFoundError } from '#lib/domain/errors';
import type { EventType } from '#lib/domain/events';
import type { Clock, RandomSource, WebhookRepository, WebhookSecrets } from '#lib/domain/ports';
import {
  ALL_EVENT_TYPES,
  isWebhookId,
  newWebhookId,
  toWebhookView,
  type WebhookEndpoint,
  type WebhookView,
  webhookUrlProblem,
} from '#lib/domain/webhook';

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
  const stored = await deps.webhooks.create(endpoint);
  return { webhook: toWebhookView(stored), secret: await deps.secrets.secretOf(stored.id) };
}

/** The key owner's endpoints, without secrets. */
export async function listWebhooks(
  deps: Pick<WebhookDeps, 'webhooks'>,
  keyOwner: KeyOwner,
): Promise<WebhookView[]> {
  return (await deps.webhooks.list(keyOwner.userId)).map(toWebhookView);
}

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
