/**
 * What a function's code reads and what its stack gives it are one list (lib/definitions/environment.ts):
 * each handler starts with exactly the variables its definition names, sees nothing else however much the
 * process holds, and reads every one of them.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ALL_FUNCTIONS,
  type AnyFunctionName,
  environmentOf,
  variablesOf,
} from '#lib/definitions/environment';
import type { FunctionSetting } from '#lib/definitions/routes';
import { TABLE_KEYS, TABLES } from '#lib/definitions/tables';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const KEY_ARN = (id: number) =>
  `arn:aws:kms:eu-west-1:123456789012:key/${id}1111111-1111-4111-8111-111111111111`;

/** A value of the right shape for every setting, as the stack would pass it on AWS. */
const SETTING_VALUES: Record<FunctionSetting, string> = {
  PUBLIC_BASE_URL: 'https://embed.example.com',
  METADATA_MAX_BYTES: '32768',
  EMBED_FRAME_ANCESTORS: 'https://host.example.com',
  BOARD_APP_URL: 'https://app.example.com/board',
  ID_TOKEN_KEYRING_KEY: KEY_ARN(1),
  WEBHOOK_SECRET_KEY: KEY_ARN(4),
  EVENT_BUS_NAME: 'embed-events',
  WEBHOOK_DELIVERY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries',
  AUTHORIZER_CACHE_TTL_SECONDS: '300',
  MAX_SESSION_LIFETIME_SECONDS: '86400',
  USAGE_PLAN_NAME: 'embed-session-prod',
};

/** What the stack sets on the function (every optional setting configured), and what Lambda sets itself. */
function deployedEnvironment(name: AnyFunctionName): Record<string, string> {
  const values: Record<string, string> = { LOG_LEVEL: 'error', ...SETTING_VALUES };
  for (const key of TABLE_KEYS) values[TABLES[key].envVar] = `stage-${key}`;
  const env: Record<string, string> = { AWS_REGION: 'eu-west-1', AWS_LAMBDA_FUNCTION_NAME: name };
  for (const variable of variablesOf(ALL_FUNCTIONS[name])) env[variable] = values[variable] as string;
  return env;
}

const runnerEnv = process.env;
afterEach(() => {
  process.env = runnerEnv;
  vi.resetModules();
});

/**
 * Imports the handler module fresh with `env` as its whole environment (the runner's own variables stay
 * visible to the test runner alone), recording each variable read while it loads.
 */
async function loadWith(name: AnyFunctionName, env: Record<string, string>): Promise<Set<string>> {
  const reads = new Set<string>();
  process.env = new Proxy(env, {
    get: (target, key) => {
      if (typeof key !== 'string') return undefined;
      if (key.startsWith('VITEST')) return runnerEnv[key];
      reads.add(key);
      return target[key];
    },
  }) as NodeJS.ProcessEnv;
  vi.resetModules();
  try {
    await import(join(ROOT, ALL_FUNCTIONS[name].entry));
  } finally {
    process.env = runnerEnv;
  }
  return reads;
}

const NAMES = Object.keys(ALL_FUNCTIONS) as AnyFunctionName[];

describe('the environment of each function, decided by its definition', () => {
  it.each(NAMES)('starts %s with exactly the variables its stack sets, and reads every one', async (name) => {
    const reads = await loadWith(name, deployedEnvironment(name));
    const unread = variablesOf(ALL_FUNCTIONS[name]).filter((variable) => !reads.has(variable));
    expect(unread, `${name} is given variables it never reads`).toEqual([]);
  });

  it('hides from a function every variable its definition does not give it, whatever the process holds', () => {
    const env = environmentOf('listWebhooks', {
      WEBHOOKS_TABLE: 'webhooks',
      IDEMPOTENCY_TABLE: 'idempotency',
      WEBHOOK_MASTER_KEY_FILE: '/tmp/master',
      AWS_REGION: 'eu-west-1',
    });
    expect(env.WEBHOOKS_TABLE).toBe('webhooks');
    expect(env.AWS_REGION).toBe('eu-west-1');
    expect(env.IDEMPOTENCY_TABLE).toBeUndefined();
    expect(env.WEBHOOK_MASTER_KEY_FILE).toBeUndefined();
    expect(Object.keys(env).sort()).toEqual(['AWS_REGION', 'WEBHOOKS_TABLE']);
  });

  it('shows a setting’s local form (a key file) exactly to the functions that list the setting', () => {
    const env = { ID_TOKEN_KEY_FILE: '/tmp/keys.json', WEBHOOK_MASTER_KEY_FILE: '/tmp/master' };
    expect(environmentOf('embedPage', env).ID_TOKEN_KEY_FILE).toBe('/tmp/keys.json');
    expect(environmentOf('embedPage', env).WEBHOOK_MASTER_KEY_FILE).toBeUndefined();
    expect(environmentOf('createWebhook', env).WEBHOOK_MASTER_KEY_FILE).toBe('/tmp/master');
    expect(environmentOf('sessionStream', env).ID_TOKEN_KEY_FILE).toBeUndefined();
  });

  it('shows WEBHOOK_ALLOW_LOOPBACK, which only the local runtime sets, to create-webhook alone, and the stack sets it on no function', async () => {
    const env = { WEBHOOK_ALLOW_LOOPBACK: '1' };
    expect(environmentOf('createWebhook', env).WEBHOOK_ALLOW_LOOPBACK).toBe('1');
    for (const name of NAMES.filter((n) => n !== 'createWebhook'))
      expect(environmentOf(name, env).WEBHOOK_ALLOW_LOOPBACK, name).toBeUndefined();
    for (const name of NAMES)
      expect(variablesOf(ALL_FUNCTIONS[name]), name).not.toContain('WEBHOOK_ALLOW_LOOPBACK');
    // A deployed create-webhook reads it, and would refuse to start were it ever set there.
    const reads = await loadWith('createWebhook', deployedEnvironment('createWebhook'));
    expect(reads.has('WEBHOOK_ALLOW_LOOPBACK')).toBe(true);
    await expect(
      loadWith('createWebhook', { ...deployedEnvironment('createWebhook'), WEBHOOK_ALLOW_LOOPBACK: '1' }),
    ).rejects.toThrow(/WEBHOOK_ALLOW_LOOPBACK is for the local runtime only/);
  });

  it('fails a handler at start-up, naming the variable, when its definition leaves out a table it needs', async () => {
    const env = deployedEnvironment('deleteWebhook');
    delete env.WEBHOOKS_TABLE;
    await expect(loadWith('deleteWebhook', { ...env, IDEMPOTENCY_TABLE: 'x' })).rejects.toThrow(
      /WEBHOOKS_TABLE is required/,
    );
  });
});
