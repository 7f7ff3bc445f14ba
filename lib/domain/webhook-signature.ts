/**
 * Standard Webhooks signatures: `v1,` + base64(HMAC-SHA256(key, `{id}.{timestamp}.{body}`)), the key
 * being the base64-decoded part of the endpoint's secret after `whsec_`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { webhookSecretKey } from '#lib/domain/webhook';

/**
 * The `webhook-signature` header value of one delivery attempt: one `v1,` signature per secret, separated
 * by spaces (during a rotation's overlap, the new secret's and the old one's), so a receiver holding
 * either secret verifies it.
 */
export function signWebhook(
  secrets: string | readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return [secrets]
    .flat()
    .map((secret) => {
      const mac = createHmac('sha256', webhookSecretKey(secret))
        .update(`${id}.${timestamp}.${body}`)
        .digest('base64');
      return `v1,${mac}`;
    })
    .join(' ');
}

/**
 * Whether a `webhook-signature` header (space-separated `v1,…` entries) holds the signature of this id,
 * timestamp and body under `secret`, compared in constant time. What a receiver does (the admin CLI's
 * `listen` and the tests use it); freshness of the timestamp is the caller's check.
 */
export function verifyWebhookSignature(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
  header: string,
): boolean {
  const expected = Buffer.from(signWebhook([secret], id, timestamp, body));
  return header.split(' ').some((entry) => {
    const given = Buffer.from(entry);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
