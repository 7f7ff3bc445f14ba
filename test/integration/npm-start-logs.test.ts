import { afterAll, describe, expect, it } from 'vitest';
import { killNpmStarts, startNpmStart } from '#test/support/npm-start';

afterAll(() => killNpmStarts());

describe('npm start: its log', () => {
  it('prints the banner first, then a JSON line per request with its id, and never a token (stdout is no terminal)', async () => {
    const service = await startNpmStart();
    const token = new URL(service.embedUrl).searchParams.get('token') as string;
    const page = await fetch(service.embedUrl);
    const requestId = page.headers.get('x-request-id');
    await fetch(`${service.baseUrl}/api/embed/sessions`, {
      headers: { Authorization: `Bearer ${service.apiKey}` },
    });
    // The child writes its log as it serves: wait for the line of the last request above.
    const logged = () =>
      service
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    await expect
      .poll(() => logged().some((line) => line.method === 'GET' && line.path === '/api/embed/sessions'))
      .toBe(true);
    const output = service.output();
    const bannerAt = output.indexOf('Embed session service running locally');
    expect(bannerAt).toBeGreaterThanOrEqual(0);
    const jsonLines = output.split('\n').filter((line) => line.startsWith('{'));
    expect(output.indexOf(jsonLines[0] as string)).toBeGreaterThan(bannerAt);
    const requests = jsonLines.map((line) => JSON.parse(line)).filter((line) => line.message === 'request');
    expect(requests).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: 'POST', path: '/api/embed/sessions', status: 201 }),
        expect.objectContaining({ method: 'GET', path: '/embed', status: 200, requestId }),
      ]),
    );
    expect(token.length).toBeGreaterThan(20);
    const afterBanner = output.slice(bannerAt).replace(service.embedUrl, '').replaceAll(service.apiKey, '');
    expect(afterBanner).not.toContain(token);
    expect(jsonLines.join('\n')).not.toContain(service.apiKey);
  });
});
