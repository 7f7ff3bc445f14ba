import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalWebhookSecrets } from '#lib/adapters/signing/webhook-secrets';

const MASTER = Buffer.alloc(32, 9);
const ID = 'whe_00000000000000000000000000000001';
let dir: string;
let secrets: LocalWebhookSecrets;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-secrets-'));
  await writeFile(join(dir, 'master'), `${MASTER.toString('base64url')}\n`, { mode: 0o600 });
  secrets = new LocalWebhookSecrets(join(dir, 'master'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const derived = (message: unknown[]) =>
  `whsec_${createHmac('sha256', MASTER).update(JSON.stringify(message)).digest('base64')}`;

describe('derived webhook secrets', () => {
  it('keeps the secret shown at creation as version 1, derived as before rotations existed', async () => {
    expect(await secrets.secretOf(ID)).toBe(derived(['webhook-secret', ID]));
    expect(await secrets.secretOf(ID, 1)).toBe(await secrets.secretOf(ID));
  });

  it('derives another secret for each later version, the same every time', async () => {
    const second = await secrets.secretOf(ID, 2);
    expect(second).toBe(derived(['webhook-secret', ID, 2]));
    expect(second).not.toBe(await secrets.secretOf(ID));
    expect(await secrets.secretOf(ID, 3)).not.toBe(second);
    expect(await secrets.secretOf(ID, 2)).toBe(second);
  });
});
