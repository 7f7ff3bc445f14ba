import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (never a downloaded browser), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, printed once; undefined when Chromium is installed. */
export const browserSkipReason = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (install Debian's chromium or set CHROMIUM_PATH)`;

/**
 * Headless Chromium with the flags this sandbox needs: no sandbox (root), and no background networking,
 * whose connections the closed network refuses.
 */
export function launchChromium(): Promise<Browser> {
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
