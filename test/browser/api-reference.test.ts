import { expect, it } from 'vitest';
import { describeInChromium, useChromium } from '#test/support/browser';
import { useTestRuntime } from '#test/support/runtime-fixture';

describeInChromium('the API reference page in a real browser (Chromium)', () => {
  const runtime = useTestRuntime();
  const browser = useChromium();

  it('renders every operation from this origin alone, with no CSP violation and no outside request', async () => {
    const page = await browser().newPage();
    const problems: string[] = [];
    const origins = new Set<string>();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => origins.add(new URL(request.url()).origin));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${runtime.baseUrl}/docs`);
    await page.getByText('Create an embed session').first().waitFor({ timeout: 15_000 });
    for (const summary of [
      'Retrieve a session',
      'List sessions of a user or a board',
      "Revoke all of a user's or a board's sessions",
    ]) {
      await expect(page.getByText(summary).first().isVisible()).resolves.toBe(true);
    }
    // Read-only: no "Try it out", so no API key is ever typed into a browser, and none of the controls
    // that only serve it: no server selector, no "Authorize", no padlock on an operation.
    expect(await page.getByText('Try it out').count()).toBe(0);
    expect(await page.locator('.servers, .auth-wrapper, .authorization__btn').count()).toBe(0);
    expect(await page.getByRole('button', { name: /authorize/i }).count()).toBe(0);
    // It shows the URL it is served from and where the guides are.
    const info = page.locator('.info');
    await expect(info.getByText(`${runtime.baseUrl}/`, { exact: true }).isVisible()).resolves.toBe(true);
    await expect(info.getByText('docs/operations.md', { exact: true }).isVisible()).resolves.toBe(true);
    expect(problems).toEqual([]);
    expect(
      [...origins].filter((origin) => origin !== runtime.baseUrl && !origin.startsWith('data:')),
    ).toEqual([]);
    await page.close();
  });
});
