import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#lib/adapters/http/api-reference/openapi';
import { GATEWAY_RESPONSES } from '#lib/adapters/http/gateway-responses';
import * as RetryAfter from '#lib/domain/retry-after';

describe('Retry-After: whole seconds, rounded up, at least one', () => {
  it('rounds a wait up to the next whole second', () => {
    expect(RetryAfter.retryAfterSeconds(1)).toBe(1);
    expect(RetryAfter.retryAfterSeconds(1_000)).toBe(1);
    expect(RetryAfter.retryAfterSeconds(1_001)).toBe(2);
    expect(RetryAfter.retryAfterSeconds(3_500)).toBe(4);
  });

  it('never asks for less than one second, even for a wait that is over or never was', () => {
    expect(RetryAfter.MIN_RETRY_AFTER_SECONDS).toBe(1);
    expect(RetryAfter.retryAfterSeconds(0)).toBe(1);
    expect(RetryAfter.retryAfterSeconds(-5_000)).toBe(1);
    expect(RetryAfter.retryAfterSeconds(0.0001)).toBe(1);
  });

  it('does not round float noise up into an extra second', () => {
    expect(RetryAfter.retryAfterSeconds((0.1 + 0.2) * 10_000)).toBe(3);
  });

  it('gives the fixed waits of a 429 and a 503 as whole seconds of at least one', () => {
    for (const seconds of [
      RetryAfter.THROTTLED_RETRY_AFTER_SECONDS,
      RetryAfter.UNAVAILABLE_RETRY_AFTER_SECONDS,
    ])
      expect(RetryAfter.retryAfterSeconds(seconds * 1000)).toBe(seconds);
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
        String(
          status === 429
            ? RetryAfter.THROTTLED_RETRY_AFTER_SECONDS
            : RetryAfter.UNAVAILABLE_RETRY_AFTER_SECONDS,
        ),
      );
  });

  it('the OpenAPI document promises at least the minimum', () => {
    const document = buildOpenApiDocument() as {
      components: { headers: Record<string, { schema: unknown }> };
    };
    expect(document.components.headers['Retry-After']?.schema).toEqual({
      type: 'integer',
      minimum: RetryAfter.MIN_RETRY_AFTER_SECONDS,
    });
  });
});
