import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, esbuildOptions } from '#infra/bundling';
import {
  BACKGROUND_FUNCTIONS,
  type BackgroundFunctionDefinition,
  type BackgroundFunctionName,
} from '#lib/definitions/background';
import { GOALS } from '#test/bench/floor';
import { sdkFloorBytes } from '#test/support/sdk-floor';

const NAMES = Object.keys(BACKGROUND_FUNCTIONS) as BackgroundFunctionName[];
let outDir: string;
const bytes = new Map<BackgroundFunctionName, number>();
const inputs = new Map<BackgroundFunctionName, string[]>();

beforeAll(() => {
  outDir = mkdtempSync(join(tmpdir(), 'background-bundles-'));
  for (const name of NAMES) {
    const { metafile, bytes: size } = buildBundle(
      esbuildOptions(BACKGROUND_FUNCTIONS[name].entry, join(outDir, name)),
    );
    // Its entry and every chunk it ships.
    bytes.set(name, size);
    // What the bundle holds, chunks included (an input reached only through code tree-shaken away
    // contributes nothing).
    inputs.set(
      name,
      Object.values(metafile.outputs).flatMap((output) => Object.keys(output.inputs)),
    );
  }
});
afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

describe('the event pipeline bundles', () => {
  it.each(NAMES)('keeps %s at most the size of its SDK floor (a coarse ceiling)', async (name) => {
    const floor = await sdkFloorBytes(name, BACKGROUND_FUNCTIONS[name]);
    expect(bytes.get(name)).toBeLessThanOrEqual(GOALS.bundleRatio * floor);
  });

  it.each(NAMES)('sends to the bus and the queue of %s through the SDK’s own clients', (name) => {
    const clients = new Set(
      (inputs.get(name) ?? []).flatMap(
        (input) => /node_modules\/@aws-sdk\/(client-[a-z]+)\//.exec(input)?.[1] ?? [],
      ),
    );
    const { putsEvents, sendsTo }: BackgroundFunctionDefinition = BACKGROUND_FUNCTIONS[name];
    expect(clients.has('client-eventbridge')).toBe(putsEvents === true);
    expect(clients.has('client-sqs')).toBe((sendsTo ?? []).length > 0);
  });

  it.each(['sessionStream', 'expirySweep'] as const)(
    'bundles no KMS, signing or JOSE code into %s: it queues logouts, the delivery worker signs them',
    (name) => {
      expect(
        (inputs.get(name) ?? []).filter((input) => /lib\/adapters\/signing\/|\/jose\//.test(input)),
      ).toEqual([]);
    },
  );

  it('bundles the ID token signer into webhookDelivery, which signs the logout tokens', () => {
    expect(inputs.get('webhookDelivery')).toContain('lib/adapters/signing/keyring-keys.ts');
  });
});
