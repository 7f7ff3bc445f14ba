import { ValidationError } from '#lib/domain/errors';
import type { EventType } from '#lib/domain/events';
import type { CreateWebhookRequest } from '#lib/use-cases/webhooks';
import { describeSchemaErrors } from './describe';
import { validateCreateWebhook as validate, validateRotateWebhookSecret } from './validators.generated.js';

/** Validates the body of POST /api/embed/webhooks. Throws `ValidationError`. */
export function parseCreateWebhookRequest(body: unknown): CreateWebhookRequest {
  if (!validate(body)) throw new ValidationError(describeSchemaErrors(validate.errors));
  const { url, events, description } = body as {
    url: string;
    events?: EventType[];
    description?: string | null;
  };
  return { url, ...(events ? { events } : {}), description: description ?? null };
}

/** Validates the optional body of POST /api/embed/webhooks/{id}/rotate-secret (none: `{}`). */
export function parseRotateWebhookSecretRequest(body: unknown): { overlapSeconds?: number } {
  const given = body ?? {};
  if (!validateRotateWebhookSecret(given))
    throw new ValidationError(describeSchemaErrors(validateRotateWebhookSecret.errors));
  return given as { overlapSeconds?: number };
}
