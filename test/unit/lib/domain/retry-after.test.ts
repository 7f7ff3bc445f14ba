import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#lib/api-reference/openapi';
import { GATEWAY_RESPONSES } from '#lib/definitions/gateway-responses';
import {
  MIN_RETRY_AFTER_SECONDS,
  retryAfterSeconds,
  THROTTLED_RETRY_AFTER_SECONDS,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
} from '#lib/domain/retry-after';

describe('Retry-After: whole seconds, rounded up, at least one', () => {
  it('rounds a wait up to the next whole second', () => {
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1_000)).toBe(1);
    expect(retryAfterSeconds(1_001)).toBe(2);
    expect(retryAfterSeconds(3_500)).toBe(4);
  });

  it('never asks for less than one second, even for a wait that is over or never was', () => {
    expect(MIN_RETRY_AFTER_SECONDS).toBe(1);
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(-5_000)).toBe(1);
    expect(retryAfterSeconds(0.0001)).toBe(1);
  });

  it('does not round float noise up into an extra second', () => {
    expect(retryAfterSeconds((0.1 + 0.2) * 10_000)).toBe(3);
  });

  it('gives the fixed waits of a 429 and a 503 as whole seconds of at least one', () => {
    for (const seconds of [THROTTLED_RETRY_AFTER_SECONDS, UNAVAILABLE_RETRY_AFTER_SECONDS])
      expect(retryAfterSeconds(seconds * 1000)).toBe(seconds);
  });
});

describe('every Retry-After of the service follows the one definition', () => {
  it('the gateway sends the throttled wait on a 429 and the unavailable wait on a 503', () => {
    const sent = Object.values(GATEWAY_RESPONSES)
      .filter((response) => response.headers?.['Retry-After'] !== undefined)
      .map((response) => [response.status, response.headers?.['Retry-After']]);
    expect(sent.length).toBeGreaterThan(0);
    for (const [status, header] of sent)
      expect(header).toBe(
        String(status === 429 ? THROTTLED_RETRY_AFTER_SECONDS : UNAVAILABLE_RETRY_AFTER_SECONDS),
      );
  });

  it('the OpenAPI document promises at least the minimum', () => {
    const document = buildOpenApiDocument() as {
      components: { headers: Record<string, { schema: unknown }> };
    };
    expect(document.components.headers['Retry-After']?.schema).toEqual({
      type: 'integer',
      minimum: MIN_RETRY_AFTER_SECONDS,
    });
  });
});
