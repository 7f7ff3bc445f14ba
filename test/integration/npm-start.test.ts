import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { startEmbeddedDynamo } from '#local/dynamodb';
import { childEnv } from '#test/support/child-env';
import { isAlive, killNpmStarts, type NpmStart, portClosed, startNpmStart } from '#test/support/npm-start';
import { rawGet } from '#test/support/raw-http';

const runShell = (command: string, env: Record<string, string>) =>
  promisify(execFile)('sh', ['-c', command], { env, timeout: 10_000 });

/** `npm start` as a developer runs it: its own processes, its banner, its signals. */
afterAll(() => killNpmStarts());

/** The banner's "Create a session" command, as a newcomer copies it into a shell. */
function bannerCurl(service: NpmStart): string {
  const command = /^\s+(curl -sS -X POST [\s\S]*?-d '[^']*')$/m.exec(service.output())?.[1];
  if (!command) throw new Error(`no curl command in the banner:\n${service.output()}`);
  return command;
}

describe("npm start: a newcomer's shell", () => {
  it.each([
    ['only PATH and HOME', {}],
    ['an AWS_PROFILE naming a profile that does not exist', { AWS_PROFILE: 'no-such-profile' }],
    ['AWS_REGION set to a region that does not exist', { AWS_REGION: 'mars-north-7' }],
  ])(
    "starts with %s, and the banner's curl creates a session",
    async (_name, env: Record<string, string>) => {
      const service = await startNpmStart(env);
      const { stdout } = await runShell(bannerCurl(service), childEnv());
      const created = JSON.parse(stdout) as { session?: { boardId?: string }; embedUrl?: string };
      expect(created.session?.boardId).toBe('board_public_demo');
      expect(created.embedUrl).toMatch(new RegExp(`^${service.baseUrl}/embed\\?token=`));
      process.kill(service.npm.pid as number, 'SIGTERM');
      await expectStopped(service);
    },
  );
});

describe('npm start: the reference board application', () => {
  it("hands the banner's demo user to the board application, which shows the board as that user", async () => {
    const service = await startNpmStart();
    // The demo link's page posts the ID token to the demo board's appUrl: the app `npm start` runs.
    const embed = await fetch(service.embedUrl);
    const html = await embed.text();
    expect(embed.status).toBe(200);
    const action = /<form id="embed-handoff" method="post" action="([^"]+)"/.exec(html)?.[1];
    expect(action).toBe(`${service.boardAppOrigin}/handoff`);
    const idToken = /name="id_token" value="([^"]+)"/.exec(html)?.[1] as string;
    const handoff = await fetch(action as string, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ id_token: idToken }).toString(),
    });
    expect(handoff.status).toBe(303);
    const cookie = (handoff.headers.get('set-cookie') as string).split(';')[0] as string;
    const board = await fetch(`${service.boardAppOrigin}/board`, { headers: { Cookie: cookie } });
    expect(board.status).toBe(200);
    const page = await board.text();
    expect(page).toContain('<strong id="user-name">Ada Lovelace</strong>');
    expect(page).toContain('<h1>Product roadmap</h1>');

    // Loopback receivers are refused by default, and the banner says how to allow them; the reference
    // application the runtime started itself still receives the demo boards' logouts: revoking the
    // demo session ends the board's session too.
    expect(service.output()).toContain(
      'Loopback receivers refused: webhooks and logouts go to public hosts only (WEBHOOK_ALLOW_LOOPBACK=1 allows 127.0.0.1, ::1, localhost)',
    );
    const refusedHook = await fetch(`${service.baseUrl}/api/embed/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `${service.boardAppOrigin}/hook` }),
    });
    expect(refusedHook.status).toBe(400);
    const sessionId = (decodeJwt(idToken) as { sid: string }).sid;
    const revoked = await fetch(`${service.baseUrl}/api/embed/sessions/${sessionId}/revoke`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.apiKey}` },
    });
    expect(revoked.status).toBe(200);
    await vi.waitFor(
      async () => {
        // The board is no longer served: the application sends the frame to the service's ended view.
        const after = await fetch(`${service.boardAppOrigin}/board`, {
          headers: { Cookie: cookie },
          redirect: 'manual',
        });
        await after.body?.cancel();
        expect(after.status).toBe(303);
        expect(after.headers.get('location')).toContain('/embed/ended?reason=revoked');
      },
      { timeout: 15_000, interval: 100 },
    );
    process.kill(service.npm.pid as number, 'SIGTERM');
    await expectStopped(service);
  });

  it('names WEBHOOK_ALLOW_LOOPBACK in its banner when the operator allows loopback receivers', async () => {
    const service = await startNpmStart({ WEBHOOK_ALLOW_LOOPBACK: '1' });
    expect(service.output()).toContain(
      'Loopback receivers allowed (WEBHOOK_ALLOW_LOOPBACK=1): webhooks and logouts may go to 127.0.0.1, ::1, localhost',
    );
    const hook = await fetch(`${service.baseUrl}/api/embed/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `${service.boardAppOrigin}/hook` }),
    });
    expect(hook.status).toBe(201);
    process.kill(service.npm.pid as number, 'SIGTERM');
    await expectStopped(service);
  });
});

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

/** What "stopped" means: every process gone and both ports closed, within a few seconds. */
async function expectStopped(service: NpmStart) {
  await vi.waitFor(() => expect(service.pids.filter(isAlive), 'processes still alive').toEqual([]), {
    timeout: 5_000,
    interval: 50,
  });
  expect(await portClosed(service.baseUrl)).toBe(true);
  expect(await portClosed(service.dynamoEndpoint)).toBe(true);
  expect(await portClosed(service.boardAppOrigin)).toBe(true);
}

describe('npm start: stopping', () => {
  it.each([
    ['Ctrl-C (SIGINT to its process group)', (s: NpmStart) => process.kill(-(s.npm.pid as number), 'SIGINT')],
    ['SIGTERM to the npm process', (s: NpmStart) => process.kill(s.npm.pid as number, 'SIGTERM')],
    ['SIGTERM to the server process', (s: NpmStart) => process.kill(s.serverPid, 'SIGTERM')],
  ])('stops the whole service, embedded DynamoDB included, on %s', async (_name, signal) => {
    const service = await startNpmStart();
    signal(service);
    await expectStopped(service);
  });

  it('keeps what it wrote to DATA_DIR across a SIGTERM and a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-data-'));
    try {
      const first = await startNpmStart({ DATA_DIR: dataDir });
      const created = await fetch(`${first.baseUrl}/api/embed/sessions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${first.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ boardId: 'board_public_demo', userId: 'u-1', email: 'u@example.com' }),
      });
      expect(created.status).toBe(201);
      const { sessionToken } = (await created.json()) as { sessionToken: string };
      process.kill(first.serverPid, 'SIGTERM');
      await expectStopped(first);

      const second = await startNpmStart({ DATA_DIR: dataDir });
      const page = await fetch(`${second.baseUrl}/embed?token=${sessionToken}`, {
        headers: { Accept: 'application/json' },
      });
      expect(page.status).toBe(200);
      process.kill(second.npm.pid as number, 'SIGTERM');
      await expectStopped(second);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** POST /api/embed/sessions with `apiKey`; the status only. */
async function createWith(service: NpmStart, apiKey: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/api/embed/sessions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ boardId: 'board_public_demo', userId: 'u-1', email: 'u@example.com' }),
  });
  return response.status;
}

/** The active API keys of the demo user in the service's DynamoDB. */
async function activeDemoKeys(service: NpmStart) {
  const db = createDocumentClient({ endpoint: service.dynamoEndpoint, region: 'local' });
  try {
    const keys = await new DynamoApiKeyRepository(db, LOCAL_TABLE_NAMES.apiKeys).list('user_demo');
    return keys.filter((key) => key.status === 'ACTIVE');
  } finally {
    db.destroy();
  }
}

describe('npm start: the demo key', () => {
  it('keeps one active demo key across restarts: the key an earlier start printed stops working', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-keys-'));
    try {
      const first = await startNpmStart({ DATA_DIR: dataDir });
      expect(await createWith(first, first.apiKey)).toBe(201);
      process.kill(first.npm.pid as number, 'SIGTERM');
      await expectStopped(first);

      const second = await startNpmStart({ DATA_DIR: dataDir });
      expect(second.apiKey).not.toBe(first.apiKey);
      expect(await createWith(second, second.apiKey)).toBe(201);
      expect(await createWith(second, first.apiKey)).toBe(401);
      expect(await activeDemoKeys(second)).toHaveLength(1);
      process.kill(second.npm.pid as number, 'SIGTERM');
      await expectStopped(second);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('npm start: against a DynamoDB of your own (DYNAMODB_ENDPOINT)', () => {
  it('creates the tables there, seeds them idempotently, says so in its banner and leaves that DynamoDB running', async () => {
    const dynamo = await startEmbeddedDynamo({ port: 0, host: '127.0.0.1' });
    try {
      const first = await startNpmStart({ DYNAMODB_ENDPOINT: dynamo.endpoint });
      expect(first.output()).toMatch(new RegExp(`DynamoDB\\s+${dynamo.endpoint}\\s+\\(DYNAMODB_ENDPOINT`));
      expect(first.output()).not.toContain('Embedded DynamoDB');
      expect(first.dynamoEndpoint).toBe(dynamo.endpoint);
      expect(await createWith(first, first.apiKey)).toBe(201);
      process.kill(first.npm.pid as number, 'SIGTERM');
      await expectStopped({ ...first, dynamoEndpoint: first.baseUrl });
      expect(await portClosed(dynamo.endpoint)).toBe(false);

      const second = await startNpmStart({ DYNAMODB_ENDPOINT: dynamo.endpoint });
      expect(await createWith(second, second.apiKey)).toBe(201);
      expect(await createWith(second, first.apiKey)).toBe(401);
      expect(await activeDemoKeys(second)).toHaveLength(1);
      process.kill(second.npm.pid as number, 'SIGTERM');
      await expectStopped({ ...second, dynamoEndpoint: second.baseUrl });
    } finally {
      await dynamo.close();
    }
  });
});
