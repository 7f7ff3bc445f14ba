import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';

/** Debian's Chromium (never a downloaded browser), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why browser tests cannot run here; undefined when Chromium is installed. */
export const browserSkipReason = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (install Debian's chromium or set CHROMIUM_PATH)`;

/**
 * A suite that needs Chromium: where it is absent, the suite is skipped and the reason printed. Its hooks
 * do not run then, nor those of a file whose tests are all in such suites (the runtime's, the browser's).
 */
export function describeInChromium(name: string, body: () => void): void {
  if (browserSkipReason) console.warn(`[browser tests skipped] ${browserSkipReason}`);
  describe.skipIf(browserSkipReason !== undefined)(name, body);
}

/**
 * Headless Chromium with the flags this sandbox needs: no sandbox (root), and no background networking,
 * whose connections the closed network refuses.
 */
function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Chromium for the tests of a file or suite, all of them in `describeInChromium`: launched before them,
 * closed after them. The value returned stands for the browser once it has launched.
 */
export function useChromium(): Browser {
  let launched: Browser | undefined;
  beforeAll(async () => {
    launched = await launchChromium();
  });
  afterAll(async () => {
    await launched?.close();
    launched = undefined;
  });
  const current = (): Browser => {
    if (!launched)
      throw new Error('the browser is used outside its tests (before beforeAll or after afterAll)');
    return launched;
  };
  return new Proxy({} as Browser, {
    get: (_target, property) => {
      const browser = current();
      const value = Reflect.get(browser, property);
      // Methods run on the browser itself, not on this stand-in.
      return typeof value === 'function' ? value.bind(browser) : value;
    },
  });
}
