/**
 * Webhook endpoints: where a tenant (an API key owner) receives the events of the sessions it created.
 * Pure and in the domain: the use cases, the admin CLI and the delivery apply the same rules.
 */
import { type DestinationPolicy, destinationRefusal, isLoopbackHost } from './destinations';
import { EVENT_TYPES, type EventType } from './events';

/** A stored webhook endpoint. Its signing secret is never stored: it is derived (see WebhookSecrets). */
export interface WebhookEndpoint {
  id: string;
  /** The key owner whose sessions' events it receives; the table's partition. */
  ownerUserId: string;
  url: string;
  /** The event types it receives. */
  events: EventType[];
  description: string | null;
  createdAt: string;
  /** The key that created it (for operators; never shown to another tenant). */
  createdByKeyId: string;
  /**
   * Which of the endpoint's secrets signs: each rotation moves to the next (absent: 1, the secret shown
   * at creation). Secrets are derived from the id and this number, never stored.
   */
  secretVersion?: number;
  /** The secret a rotation replaced, which still signs too (a second signature) until `until`. */
  previousSecret?: { version: number; until: string };
  /** The rotation that set `secretVersion`: how a rotation whose answer was lost recognises its write. */
  secretRotationId?: string;
}

/** An endpoint as the API shows it to its owner: never a secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  createdAt: string;
}

export function toWebhookView(endpoint: WebhookEndpoint): WebhookView {
  const { id, url, events, description, createdAt } = endpoint;
  return { id, url, events: [...events], description, createdAt };
}

/**
 * The most endpoints one key owner may have (what Stripe allows): the fan-out of each event is bounded by
 * it. The 17th create is a 422; the bound holds under concurrent creates (lib/adapters/dynamodb/webhooks.ts).
 */
export const MAX_WEBHOOK_ENDPOINTS_PER_OWNER = 16;

/** `whe_` and 32 hex digits. */
export const WEBHOOK_ID_PATTERN = /^whe_[0-9a-f]{32}$/;

/** A new endpoint id from a UUID's 122 random bits. */
export function newWebhookId(uuid: string): string {
  return `whe_${uuid.replaceAll('-', '')}`;
}

export function isWebhookId(value: string): boolean {
  return WEBHOOK_ID_PATTERN.test(value);
}

/** The prefix of every endpoint signing secret (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * The bytes an endpoint's secret is the keyed hash of: a JSON array, so no id can be mistaken for another.
 * Version 1 (the secret shown at creation) keeps the message it had before secrets were rotated, so
 * existing endpoints keep their secret; each rotation's secret adds its version.
 */
export function webhookSecretMessage(endpointId: string, version = 1): Buffer {
  const parts = version === 1 ? ['webhook-secret', endpointId] : ['webhook-secret', endpointId, version];
  return Buffer.from(JSON.stringify(parts), 'utf8');
}

/** The version of the endpoint's current secret. */
export function currentSecretVersion(endpoint: Pick<WebhookEndpoint, 'secretVersion'>): number {
  return endpoint.secretVersion ?? 1;
}

/**
 * The versions of the secrets that sign a delivery at `now`: the current one, and during a rotation's
 * overlap the one it replaced (Standard Webhooks: one `v1,` signature per secret), current first.
 */
export function signingSecretVersions(
  endpoint: Pick<WebhookEndpoint, 'secretVersion' | 'previousSecret'>,
  now: Date,
): number[] {
  const current = currentSecretVersion(endpoint);
  const previous = endpoint.previousSecret;
  return previous !== undefined && now.getTime() < Date.parse(previous.until)
    ? [current, previous.version]
    : [current];
}

/**
 * How long the replaced secret keeps signing after a rotation: a day unless asked, at most a week (long
 * enough to roll the new secret out to every receiver, short enough that a leaked secret soon stops);
 * 0 stops it at once.
 */
export const WEBHOOK_SECRET_OVERLAP_SECONDS = { default: 86_400, max: 604_800 } as const;

/** The secret as shown to the owner: `whsec_` and the base64 of the 32 key bytes. */
export function formatWebhookSecret(key: Uint8Array): string {
  return `${WEBHOOK_SECRET_PREFIX}${Buffer.from(key).toString('base64')}`;
}

/** The key bytes of a `whsec_…` secret (what a receiver HMACs with). */
export function webhookSecretKey(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
}

/** Every event type, for an endpoint created without `events`. */
export const ALL_EVENT_TYPES: readonly EventType[] = EVENT_TYPES;

/**
 * The problem with `value` as an endpoint URL, or undefined when it is one: an absolute https URL (http
 * only to a loopback receiver the policy allows), with a host on the public internet (see
 * lib/domain/destinations.ts), without credentials or a fragment, at most 2,048 characters.
 */
export function webhookUrlProblem(value: string, policy: DestinationPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `url "${value}" is not an absolute URL`;
  }
  if (url.hostname === '' || value !== value.trim()) return `url "${value}" is not an absolute URL`;
  if (value.length > 2048) return 'url is at most 2048 characters';
  const loopbackHttp = url.protocol === 'http:' && policy.allowLoopback && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) {
    return policy.allowLoopback
      ? `url must use https (or http to a loopback receiver: 127.0.0.1, ::1, localhost), got "${value}"`
      : `url must use https, got "${value}"`;
  }
  if (url.username || url.password) return 'url must not contain a user name or password';
  if (value.includes('#')) return 'url must not have a fragment';
  const refused = destinationRefusal(url, policy);
  if (refused !== undefined)
    return `url must point to the public internet: ${refused}${loopbackHint(url, policy)}`;
  return undefined;
}

/** For a loopback host refused on the local runtime: how its operator allows it. */
function loopbackHint(url: URL, policy: DestinationPolicy): string {
  return policy.loopbackHint && isLoopbackHost(url.hostname) ? ` (${policy.loopbackHint})` : '';
}

/** Whether an endpoint receives events of this type. */
export function subscribesTo(endpoint: Pick<WebhookEndpoint, 'events'>, type: EventType): boolean {
  return endpoint.events.includes(type);
}
