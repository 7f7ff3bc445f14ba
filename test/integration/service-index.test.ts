import { describe, expect, it } from 'vitest';
import { call } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

const runtime = useTestRuntime();

describe('GET /', () => {
  it('answers JSON linking the reference page, the OpenAPI document, the health check and the guides', async () => {
    const result = await call(runtime, '/');
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('application/json');
    expect(result.headers.get('vary')).toBe('Accept');
    const links = result.body.links as Record<string, { href: string }>;
    expect(Object.values(links).map((l) => l.href)).toEqual(
      expect.arrayContaining(['docs', 'openapi.json', 'health']),
    );
    expect(result.body.guides).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'docs/embedding.md' })]),
    );
    // Every link it gives works from the API's base URL.
    for (const href of ['docs', 'openapi.json', 'health'])
      expect((await fetch(new URL(href, `${runtime.baseUrl}/`))).status).toBe(200);
  });

  it('answers a browser with an HTML page of the same links, which runs no script', async () => {
    const result = await call(runtime, '/', {
      headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('text/html; charset=utf-8');
    for (const href of ['docs', 'openapi.json', 'health']) expect(result.text).toContain(`href="${href}"`);
    expect(result.text).toContain('docs/embedding.md');
    expect(result.text).not.toContain('<script');
    expect(result.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});
