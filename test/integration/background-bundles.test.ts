import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_BUNDLE_BUDGET_BYTES } from '#infra/bundle-budgets';
import { esbuildOptions } from '#infra/bundling';
import { BACKGROUND_FUNCTIONS, type BackgroundFunctionName } from '#lib/definitions/background';

const NAMES = Object.keys(BACKGROUND_FUNCTIONS) as BackgroundFunctionName[];
let outDir: string;
const bytes = new Map<BackgroundFunctionName, number>();
const inputs = new Map<BackgroundFunctionName, string[]>();

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'background-bundles-'));
  for (const name of NAMES) {
    const outfile = join(outDir, name, 'index.mjs');
    const { metafile } = await build({
      ...esbuildOptions(BACKGROUND_FUNCTIONS[name].entry, outfile),
      metafile: true,
    });
    bytes.set(name, statSync(outfile).size);
    inputs.set(name, Object.keys(metafile.inputs));
  }
});
afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

describe('the event pipeline bundles', () => {
  it('gives every background function a size budget', () => {
    expect(Object.keys(BACKGROUND_BUNDLE_BUDGET_BYTES).sort()).toEqual([...NAMES].sort());
  });

  it.each(NAMES)('keeps %s within its size budget (infra/bundle-budgets.ts)', (name) => {
    expect(bytes.get(name)).toBeLessThanOrEqual(BACKGROUND_BUNDLE_BUDGET_BYTES[name]);
  });

  it.each(NAMES)('bundles no EventBridge or SQS SDK client into %s: the calls are signed JSON', (name) => {
    expect((inputs.get(name) ?? []).filter((input) => /client-(eventbridge|sqs)/.test(input))).toEqual([]);
  });

  it.each(['sessionStream', 'expirySweep'] as const)(
    'bundles no KMS, signing or JOSE code into %s: it queues logouts, the delivery worker signs them',
    (name) => {
      expect((inputs.get(name) ?? []).filter((input) => /lib\/signing\/|\/jose\//.test(input))).toEqual([]);
    },
  );

  it('bundles the ID token signer into webhookDelivery, which signs the logout tokens', () => {
    expect(inputs.get('webhookDelivery')).toContain('lib/signing/kms.ts');
  });
});
