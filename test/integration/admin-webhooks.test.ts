import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '#admin/cli';
import { listen } from '#admin/webhooks';
import type { LocalRuntime } from '#local/runtime';
import { childEnv } from '#test/support/child-env';
import { createdSessionView } from '#test/support/create-session-as';
import { adminEnv, apiCall, testTarget } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';
import {
  routedEvent,
  startWebhookReceiver,
  verifiedByReceiver,
  type WebhookReceiver,
} from '#test/support/webhook-receiver';

/** The admin CLI's webhook commands against the local runtime: operators' list and delete, and listen. */
const runtime = useTestRuntime();
let demo: NonNullable<LocalRuntime['demo']>;
let receiver: WebhookReceiver;

beforeAll(async () => {
  demo = runtime.demo as NonNullable<LocalRuntime['demo']>;
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const admin = (...args: string[]) => runAdmin(args, adminEnv(runtime)) as Promise<Record<string, unknown>>;

const demoSession = () => createdSessionView(runtime, demo);

describe.skipIf(testTarget() === 'assembly')('admin webhook commands', () => {
  it('lists every tenant’s endpoints with their owner and no secret, and deletes one', async () => {
    const created = await apiCall(runtime, demo.apiKey, 'POST', '/api/embed/webhooks', {
      url: `${receiver.url}/op`,
    });
    const id = (created.body.webhook as { id: string }).id;
    const listed = await admin('list-webhooks');
    expect(listed.webhooks).toContainEqual(
      expect.objectContaining({ id, ownerUserId: demo.userId, url: `${receiver.url}/op` }),
    );
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    expect(await admin('delete-webhook', '--user', demo.userId, '--id', id)).toEqual({ deleted: true, id });
    expect((await admin('list-webhooks', '--user', demo.userId)).webhooks).not.toContainEqual(
      expect.objectContaining({ id }),
    );
    // Nor in the listing of every tenant's: the deleted endpoint's tombstone is no endpoint.
    expect((await admin('list-webhooks')).webhooks).not.toContainEqual(expect.objectContaining({ id }));
  });

  it('listen forwards the key owner’s events to a URL, signed with the secret it prints, and removes its endpoint on stop', async () => {
    const printed: string[] = [];
    const stop = new AbortController();
    let finished: ReturnType<typeof listen> | undefined;
    const secretPrinted = new Promise<string>((resolve) => {
      const running = listen(
        { baseUrl: runtime.baseUrl, apiKey: demo.apiKey, forwardTo: `${receiver.url}/listen` },
        {
          print: (line) => {
            printed.push(line);
            const match = /Signing secret: (whsec_\S+)/.exec(line);
            if (match?.[1]) resolve(match[1]);
          },
          until: stop.signal,
        },
      );
      finished = running;
    });
    const secret = await secretPrinted;
    await runtime.eventSinks[0]?.publish([
      routedEvent(await demoSession(), 'session.created', { userId: demo.userId }),
    ]);
    const [delivery] = await receiver.waitFor(1, '/listen');
    expect(verifiedByReceiver(secret, delivery as NonNullable<typeof delivery>)).toBe(true);
    stop.abort();
    const result = await finished;
    expect(result).toMatchObject({ forwardedTo: `${receiver.url}/listen`, deleted: true });
    const remaining = (await apiCall(runtime, demo.apiKey, 'GET', '/api/embed/webhooks')).body.data as Array<{
      url: string;
    }>;
    expect(remaining.map((w) => w.url)).not.toContain(`${receiver.url}/listen`);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'listen, as a process of its own with no DynamoDB setting, stays in the foreground until %s, then deletes its endpoint and exits 0',
    async (signal) => {
      const forwardTo = `${receiver.url}/listen-${signal}`;
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'admin/cli.ts',
          'listen',
          '--api-key',
          demo.apiKey,
          '--forward-to',
          forwardTo,
          '--base-url',
          runtime.baseUrl,
        ],
        { cwd: join(import.meta.dirname, '../..'), env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      const exited = once(child, 'exit');
      try {
        await new Promise<void>((resolve, reject) => {
          child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
            if (stderr.includes('Signing secret:')) resolve();
          });
          child.once('exit', (code) => reject(new Error(`listen exited early (${code}): ${stderr}`)));
        });
        // An event is delivered while it runs: the process is still there afterwards, waiting.
        await runtime.eventSinks[0]?.publish([
          routedEvent(await demoSession(), 'session.created', { userId: demo.userId }),
        ]);
        await receiver.waitFor(1, `/listen-${signal}`);
        expect(child.exitCode).toBeNull();
        child.kill(signal);
        const [code] = await exited;
        expect(code).toBe(0);
        expect(JSON.parse(stdout)).toMatchObject({ forwardedTo: forwardTo, deleted: true });
        const remaining = (await apiCall(runtime, demo.apiKey, 'GET', '/api/embed/webhooks')).body
          .data as Array<{ url: string }>;
        expect(remaining.map((w) => w.url)).not.toContain(forwardTo);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );
});
