import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '#local/runtime';
import { createdSessionView } from '#test/support/create-session-as';
import { apiCall, testTarget } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { routedEvent, startWebhookReceiver, type WebhookReceiver } from '#test/support/webhook-receiver';

/**
 * docs/events.md shows a receiver how to verify a delivery with Node's crypto alone: that very code
 * verifies a real delivery of the local runtime, and refuses a tampered or stale one.
 */
const ROOT = join(import.meta.dirname, '../..');
const EVENTS_DOC = readFileSync(join(ROOT, 'docs/events.md'), 'utf8');

function example(): string {
  const blocks = [...EVENTS_DOC.matchAll(/^```js\n(\/\/ verify-webhook\.mjs\n[\s\S]*?)^```$/gm)];
  if (blocks.length !== 1)
    throw new Error(`docs/events.md must hold one verify-webhook.mjs block, found ${blocks.length}`);
  return (blocks[0] as RegExpMatchArray)[1] as string;
}

type Verify = (secret: string, headers: Record<string, unknown>, body: string, now?: number) => boolean;

const runtime = useTestRuntime();
let receiver: WebhookReceiver;
let dir: string;
let verifyWebhook: Verify;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'events-doc-'));
  writeFileSync(join(dir, 'verify-webhook.mjs'), example());
  ({ verifyWebhook } = (await import(pathToFileURL(join(dir, 'verify-webhook.mjs')).href)) as {
    verifyWebhook: Verify;
  });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(testTarget() === 'assembly')('docs/events.md', () => {
  it('verifies a real delivery with the example’s code, and refuses it tampered, stale or under another secret', async () => {
    const demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
    const created = await apiCall(runtime, demo.apiKey, 'POST', '/api/embed/webhooks', {
      url: `${receiver.url}/doc`,
    });
    const secret = String(created.body.secret);
    const other = await apiCall(runtime, demo.apiKey, 'POST', '/api/embed/webhooks', {
      url: `${receiver.url}/other`,
    });
    const view = await createdSessionView(runtime, demo);
    await runtime.eventSinks[0]?.publish([
      routedEvent(view, 'session.created', { userId: demo.userId, keyId: demo.keyId }),
    ]);
    const [delivery] = await receiver.waitFor(1, '/doc');
    const { headers, body } = delivery as NonNullable<typeof delivery>;
    expect(verifyWebhook(secret, headers, body)).toBe(true);
    expect(verifyWebhook(secret, headers, body.replace('session.created', 'session.revoked'))).toBe(false);
    expect(verifyWebhook(secret, headers, body, Date.now() + 10 * 60_000)).toBe(false);
    expect(verifyWebhook(String(other.body.secret), headers, body)).toBe(false);
  });
});
