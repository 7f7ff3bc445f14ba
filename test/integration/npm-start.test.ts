import { afterAll, describe, expect, it } from 'vitest';
import { killNpmStarts, type NpmStart, startNpmStart } from '#test/support/npm-start';
import { rawGet } from '#test/support/raw-http';

/** `npm start` as a developer runs it: its own processes, its banner, its signals. */
afterAll(() => killNpmStarts());

describe('npm start: requests that are not URLs', () => {
  let service: NpmStart;

  it('keeps serving after GET //[, /%zz% and //a:99999/x', async () => {
    service = await startNpmStart();
    const { hostname, port } = new URL(service.baseUrl);
    for (const target of ['//[', '/%zz%', '//a:99999/x']) {
      const response = await rawGet(hostname, Number(port), target);
      expect(response.status).toBe(404);
    }
    const health = await fetch(`${service.baseUrl}/health`);
    expect(health.status).toBe(200);
  });
});
