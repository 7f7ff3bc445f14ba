import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_SCRIPT_INTEGRITY, HOST_SCRIPT_PATH } from '#lib/adapters/http/embed/host-script';
import { call } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

const ROOT = join(import.meta.dirname, '../..');

const runtime = useTestRuntime();

/**
 * The `<script src="…/embed.js?v=…" integrity="…">` tags a page tells hosts to paste, or, in the example
 * host page's template, serves (its base URL a `{{apiBaseUrl}}` placeholder).
 */
function scriptTags(page: string): Array<{ path: string; integrity: string }> {
  const text = readFileSync(join(ROOT, page), 'utf8');
  return [
    ...text.matchAll(
      /<script src="(?:https?:\/\/[^/"]+|\{\{apiBaseUrl\}\})(\/embed\.js\?v=[0-9a-f]+)"\s+integrity="([^"]+)"/g,
    ),
  ].map((match) => ({ path: match[1] ?? '', integrity: match[2] ?? '' }));
}

/** The bytes the running service serves at `path`. */
async function served(path: string): Promise<Buffer> {
  const response = await fetch(`${runtime.baseUrl}${path}`);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe('GET /embed.js on the local runtime', () => {
  it('serves the host script to any origin, cached for a year at its versioned URL', async () => {
    const result = await call(runtime, HOST_SCRIPT_PATH, { headers: { Origin: 'https://app.acme.com' } });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(result.headers.get('access-control-allow-origin')).toBe('*');
    expect(result.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(result.text).toContain('EmbedSession');
  });

  it('answers 304 to a revalidation with its ETag', async () => {
    const first = await call(runtime, '/embed.js');
    expect(first.headers.get('cache-control')).toBe('public, max-age=3600');
    const etag = first.headers.get('etag') ?? '';
    const again = await call(runtime, '/embed.js', { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('answers 405 to another method', async () => {
    const result = await call(runtime, '/embed.js', { method: 'POST', body: '' });
    expect(result.status).toBe(405);
    expect(result.headers.get('allow')).toBe('GET');
  });
});

describe.each(['docs/quickstart.md', 'docs/embedding.md', 'examples/host-page/page.html'])(
  'the script tag in %s',
  (page) => {
    it('pins exactly the bytes the service serves: its integrity hash and its version match them', async () => {
      const tags = scriptTags(page);
      expect(tags, `${page} must show exactly one embed.js script tag`).toHaveLength(1);
      const [tag] = tags;
      const bytes = await served(tag?.path ?? '');
      const integrity = `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
      expect(
        tag,
        `update ${page}: the script is now at ${HOST_SCRIPT_PATH} with ${HOST_SCRIPT_INTEGRITY}`,
      ).toEqual({
        path: HOST_SCRIPT_PATH,
        integrity,
      });
    });
  },
);
