import { describe, expect, it } from 'vitest';
import {
  ALLOW_LOOPBACK_HINT,
  ConfigError,
  DEFAULT_FRAME_ANCESTORS,
  DEFAULT_METADATA_MAX_BYTES,
  METADATA_MAX_BYTES_CEILING,
  readAuthorizerConfig,
  readCreateSessionConfig,
  readCreateWebhookConfig,
  readDestinationPolicy,
  readDiscoveryConfig,
  readEmbedPageConfig,
  readEventPipelineConfig,
  readWebhookRetrySeconds,
} from '#lib/platform/config';

const TABLES = {
  BOARDS_TABLE: 'boards',
  MEMBERSHIPS_TABLE: 'memberships',
  SESSIONS_TABLE: 'sessions',
  API_KEYS_TABLE: 'api-keys',
  IDEMPOTENCY_TABLE: 'idempotency',
};
const ENV = { ...TABLES, AWS_REGION: 'eu-west-1' };

/** The ConfigError that reading `env` must throw. */
function configError(read: () => unknown): ConfigError {
  let caught: unknown;
  try {
    read();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  return caught as ConfigError;
}

describe('readCreateSessionConfig', () => {
  it('reads the table names, region and defaults', () => {
    expect(readCreateSessionConfig(ENV)).toEqual({
      tables: {
        boards: 'boards',
        memberships: 'memberships',
        sessions: 'sessions',
        idempotency: 'idempotency',
      },
      dynamo: { endpoint: undefined, region: 'eu-west-1' },
      publicBaseUrl: undefined,
      metadataMaxBytes: 32 * 1024,
      maxBodyBytes: 6 * 32 * 1024 + 16 * 1024,
    });
    expect(DEFAULT_METADATA_MAX_BYTES).toBe(32_768);
  });

  it('lists every missing table variable and the region in one ConfigError', () => {
    const error = configError(() => readCreateSessionConfig({}));
    expect(error.name).toBe('ConfigError');
    for (const name of ['BOARDS_TABLE', 'MEMBERSHIPS_TABLE', 'SESSIONS_TABLE', 'AWS_REGION']) {
      expect(error.message).toContain(name);
    }
  });

  it('treats a blank table name as missing', () => {
    const error = configError(() => readCreateSessionConfig({ ...ENV, SESSIONS_TABLE: '   ' }));
    expect(error.message).toContain('SESSIONS_TABLE is required');
    expect(error.message).not.toContain('BOARDS_TABLE');
  });

  it('falls back to AWS_DEFAULT_REGION', () => {
    const { AWS_REGION: _, ...rest } = ENV;
    expect(readCreateSessionConfig({ ...rest, AWS_DEFAULT_REGION: 'ap-south-1' }).dynamo.region).toBe(
      'ap-south-1',
    );
  });

  it('accepts a local DynamoDB endpoint without a region', () => {
    const { AWS_REGION: _, ...rest } = ENV;
    expect(readCreateSessionConfig({ ...rest, DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' }).dynamo).toEqual({
      endpoint: 'http://127.0.0.1:8000',
      region: 'local',
    });
  });

  it('refuses a DYNAMODB_ENDPOINT that is not an http(s) URL', () => {
    expect(
      configError(() => readCreateSessionConfig({ ...ENV, DYNAMODB_ENDPOINT: 'localhost:8000' })).message,
    ).toContain('DYNAMODB_ENDPOINT');
  });

  describe('PUBLIC_BASE_URL', () => {
    it.each([
      ['https://embed.example.com', 'https://embed.example.com'],
      ['https://embed.example.com/', 'https://embed.example.com'],
      ['https://example.com/boards//', 'https://example.com/boards'],
      ['  http://localhost:3000/  ', 'http://localhost:3000'],
    ])('reads %j as %j (trailing slashes trimmed)', (value, expected) => {
      expect(readCreateSessionConfig({ ...ENV, PUBLIC_BASE_URL: value }).publicBaseUrl).toBe(expected);
    });

    it('is undefined when empty, so the request decides', () => {
      expect(readCreateSessionConfig({ ...ENV, PUBLIC_BASE_URL: '' }).publicBaseUrl).toBeUndefined();
    });

    it.each([
      'embed.example.com',
      '/embed',
      'ftp://embed.example.com',
      'javascript:alert(1)',
      'https://embed.example.com/?x=1',
      'https://embed.example.com/#top',
      'https://embed.example.com/?',
      'https://embed.example.com#',
      'https://user:secret@embed.example.com',
      'https://user@embed.example.com',
    ])('refuses %j', (value) => {
      expect(
        configError(() => readCreateSessionConfig({ ...ENV, PUBLIC_BASE_URL: value })).message,
      ).toContain('PUBLIC_BASE_URL');
    });
  });

  describe('METADATA_MAX_BYTES', () => {
    it.each([
      ['1', 1],
      ['1024', 1024],
      ['116736', 114 * 1024],
    ])('accepts %s and sizes the body limit 16 KiB above it', (value, bytes) => {
      const config = readCreateSessionConfig({ ...ENV, METADATA_MAX_BYTES: value });
      expect(config.metadataMaxBytes).toBe(bytes);
      expect(config.maxBodyBytes).toBe(6 * bytes + 16 * 1024);
    });

    it.each(['0', '-1', '116737', '1.5', '1e3', 'abc', '32 KiB'])('refuses %j', (value) => {
      expect(
        configError(() => readCreateSessionConfig({ ...ENV, METADATA_MAX_BYTES: value })).message,
      ).toContain('METADATA_MAX_BYTES');
    });

    it('refuses at start-up a value above what an event’s carriers hold, saying why (the old 350 KiB too)', () => {
      expect(METADATA_MAX_BYTES_CEILING).toBe(114 * 1024);
      for (const value of ['116737', '358400']) {
        expect(
          configError(() => readCreateSessionConfig({ ...ENV, METADATA_MAX_BYTES: value })).message,
        ).toBe(
          `Invalid configuration: METADATA_MAX_BYTES must be an integer from 1 to 116736, got "${value}" ` +
            '(so that every event carrying a session’s metadata fits an EventBridge entry and a webhook delivery message, 256 KiB each)',
        );
      }
    });
  });

  it('reports every problem at once', () => {
    const error = configError(() =>
      readCreateSessionConfig({ ...ENV, BOARDS_TABLE: '', PUBLIC_BASE_URL: 'nope', METADATA_MAX_BYTES: '0' }),
    );
    expect(error.message).toContain('BOARDS_TABLE');
    expect(error.message).toContain('PUBLIC_BASE_URL');
    expect(error.message).toContain('METADATA_MAX_BYTES');
  });
});

describe('readAuthorizerConfig', () => {
  it('reads the API keys table and region', () => {
    expect(readAuthorizerConfig(ENV)).toEqual({
      authorizerCacheTtlSeconds: 300,
      tables: { apiKeys: 'api-keys' },
      dynamo: { endpoint: undefined, region: 'eu-west-1' },
    });
  });

  it('refuses a missing API_KEYS_TABLE', () => {
    const { API_KEYS_TABLE: _, ...rest } = ENV;
    expect(configError(() => readAuthorizerConfig(rest)).message).toContain('API_KEYS_TABLE');
  });
});

describe('readEmbedPageConfig', () => {
  const EMBED_ENV = { SESSIONS_TABLE: 'sessions', BOARDS_TABLE: 'boards', AWS_REGION: 'eu-west-1' };

  it('reads the sessions and boards tables, the region and the default frame ancestors', () => {
    expect(readEmbedPageConfig(EMBED_ENV)).toEqual({
      tables: { sessions: 'sessions', boards: 'boards' },
      dynamo: { endpoint: undefined, region: 'eu-west-1' },
      frameAncestors: DEFAULT_FRAME_ANCESTORS,
      publicBaseUrl: undefined,
      boardAppUrl: undefined,
      appUrlRule: { allowLoopbackHttp: false },
    });
  });

  it('reads the stage’s default board application from BOARD_APP_URL', () => {
    const config = readEmbedPageConfig({ ...EMBED_ENV, BOARD_APP_URL: ' https://board.example.com/app ' });
    expect(config.boardAppUrl).toBe('https://board.example.com/app');
  });

  it('allows a loopback http board application only where the service itself runs on loopback http', () => {
    const local = {
      ...EMBED_ENV,
      PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
      BOARD_APP_URL: 'http://127.0.0.1:3001/',
    };
    expect(readEmbedPageConfig(local)).toMatchObject({
      boardAppUrl: 'http://127.0.0.1:3001/',
      appUrlRule: { allowLoopbackHttp: true },
    });
    const remote = { ...local, PUBLIC_BASE_URL: 'https://embed.example.com' };
    expect(configError(() => readEmbedPageConfig(remote)).message).toContain('BOARD_APP_URL');
    const { PUBLIC_BASE_URL: _, ...derived } = local;
    expect(configError(() => readEmbedPageConfig(derived)).message).toContain('https');
  });

  it.each(['http://board.example.com', 'board.example.com', 'https://u:p@board.example.com'])(
    'refuses BOARD_APP_URL %j',
    (value) => {
      const error = configError(() => readEmbedPageConfig({ ...EMBED_ENV, BOARD_APP_URL: value }));
      expect(error.message).toContain('BOARD_APP_URL');
    },
  );

  const KEYRING_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555';
  const DYNAMO = { endpoint: undefined, region: 'eu-west-1' };

  it('reads the keyring’s KMS key by ARN and its table, in the function’s region', () => {
    const config = readEmbedPageConfig({
      ...EMBED_ENV,
      ID_TOKEN_KEYRING_KEY: KEYRING_KEY,
      SIGNING_KEYS_TABLE: 'signing-keys',
    });
    expect(config.idTokenKeys).toEqual({
      kind: 'kms',
      keyArn: KEYRING_KEY,
      region: 'eu-west-1',
      table: 'signing-keys',
      dynamo: DYNAMO,
    });
  });

  it.each([
    [
      { ID_TOKEN_KEYRING_KEY: 'alias/id-token', SIGNING_KEYS_TABLE: 't' },
      'ID_TOKEN_KEYRING_KEY must be a KMS key ARN',
    ],
    [{ ID_TOKEN_KEYRING_KEY: KEYRING_KEY }, 'SIGNING_KEYS_TABLE is required'],
  ])('refuses a keyring key that is not a key ARN, or a keyring without its table (%j)', (env, message) => {
    expect(configError(() => readEmbedPageConfig({ ...EMBED_ENV, ...env })).message).toContain(message);
  });

  it('reads the local runtime’s key file, and no keys at all where none are configured', () => {
    expect(
      readEmbedPageConfig({
        ...EMBED_ENV,
        ID_TOKEN_KEY_FILE: '/tmp/k.json',
        SIGNING_KEYS_TABLE: 'signing-keys',
      }).idTokenKeys,
    ).toEqual({ kind: 'file', path: '/tmp/k.json', table: 'signing-keys', dynamo: DYNAMO });
    expect(readEmbedPageConfig(EMBED_ENV).idTokenKeys).toBeUndefined();
  });

  it('gives discovery the keyring’s table and no key at all', () => {
    expect(readDiscoveryConfig({ SIGNING_KEYS_TABLE: 'signing-keys', AWS_REGION: 'eu-west-1' })).toEqual({
      publicBaseUrl: undefined,
      keys: { table: 'signing-keys', dynamo: DYNAMO },
    });
    expect(readDiscoveryConfig({}).keys).toBeUndefined();
  });

  it('lets any https site and localhost frame the page by default', () => {
    expect(DEFAULT_FRAME_ANCESTORS).toBe('https: http://localhost:* http://127.0.0.1:*');
  });

  it.each(['', '   '])('uses the default frame ancestors when EMBED_FRAME_ANCESTORS is %j', (value) => {
    expect(readEmbedPageConfig({ ...EMBED_ENV, EMBED_FRAME_ANCESTORS: value }).frameAncestors).toBe(
      DEFAULT_FRAME_ANCESTORS,
    );
  });

  it('accepts custom origins, wildcard subdomains, ports and keywords', () => {
    const value = "https://app.example.com https://*.example.org:8443 'self'";
    expect(readEmbedPageConfig({ ...EMBED_ENV, EMBED_FRAME_ANCESTORS: value }).frameAncestors).toBe(value);
  });

  it('normalizes the whitespace between sources', () => {
    const value = "  https://app.example.com \t\n 'self'  ";
    expect(readEmbedPageConfig({ ...EMBED_ENV, EMBED_FRAME_ANCESTORS: value }).frameAncestors).toBe(
      "https://app.example.com 'self'",
    );
  });

  it.each([
    'javascript:',
    '*',
    'https://exa mple.com',
    "'unsafe-inline'",
    'https://app.example.com; script-src *',
    'https://app.example.com;',
    'data:',
    'https://app.example.com/path',
  ])('refuses %j with a ConfigError naming EMBED_FRAME_ANCESTORS', (value) => {
    const error = configError(() => readEmbedPageConfig({ ...EMBED_ENV, EMBED_FRAME_ANCESTORS: value }));
    expect(error.message).toContain('EMBED_FRAME_ANCESTORS');
  });

  it.each(['SESSIONS_TABLE', 'BOARDS_TABLE'])('refuses a missing %s', (name) => {
    const env: Record<string, string> = { ...EMBED_ENV };
    delete env[name];
    expect(configError(() => readEmbedPageConfig(env)).message).toContain(`${name} is required`);
  });

  it('reports every problem at once and asks for neither the memberships nor the API keys table', () => {
    const error = configError(() => readEmbedPageConfig({ EMBED_FRAME_ANCESTORS: '*' }));
    expect(error.message).not.toContain('MEMBERSHIPS_TABLE');
    expect(error.message).not.toContain('API_KEYS_TABLE');
    for (const name of ['SESSIONS_TABLE', 'BOARDS_TABLE', 'AWS_REGION', 'EMBED_FRAME_ANCESTORS']) {
      expect(error.message).toContain(name);
    }
  });
});

describe('WEBHOOK_RETRY_SECONDS', () => {
  it('reads comma-separated whole seconds, defaulting to 1,2,4, and 0 as no retry', () => {
    const read = (value?: string) => {
      const problems: string[] = [];
      const schedule = readWebhookRetrySeconds(
        value === undefined ? {} : { WEBHOOK_RETRY_SECONDS: value },
        problems,
      );
      return { schedule, problems };
    };
    expect(read()).toEqual({ schedule: [1, 2, 4], problems: [] });
    expect(read(' 5, 10 ,60')).toEqual({ schedule: [5, 10, 60], problems: [] });
    expect(read('0')).toEqual({ schedule: [], problems: [] });
    for (const bad of ['1,,2', 'abc', '-1', '1.5', '0,1', '100000']) {
      const { problems } = read(bad);
      expect(problems, bad).toHaveLength(1);
      expect(problems[0]).toContain('WEBHOOK_RETRY_SECONDS');
    }
  });
});

describe('the event pipeline’s back-channel logout settings', () => {
  const PIPELINE = {
    WEBHOOKS_TABLE: 'webhooks',
    BOARDS_TABLE: 'boards',
    AWS_REGION: 'eu-west-1',
    WEBHOOK_DELIVERY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries',
  };
  const SIGNING = {
    PUBLIC_BASE_URL: 'https://embed.example.com/',
    ID_TOKEN_KEYRING_KEY: 'arn:aws:kms:eu-west-1:123456789012:key/11111111-1111-4111-8111-111111111111',
    SIGNING_KEYS_TABLE: 'signing-keys',
  };
  const read = (env: Record<string, string>, signs: boolean) =>
    readEventPipelineConfig(env, ['webhooks', 'boards'], { eventBus: false, signs });

  it('reads the issuer, the stage’s application and the keys that sign logout tokens, as the embed page does', () => {
    const config = read({ ...PIPELINE, ...SIGNING, BOARD_APP_URL: 'https://app.example.com/in' }, true);
    expect(config.logout).toEqual({
      issuer: 'https://embed.example.com',
      boardAppUrl: 'https://app.example.com/in',
      appUrlRule: { allowLoopbackHttp: false },
      idTokenKeys: {
        kind: 'kms',
        keyArn: SIGNING.ID_TOKEN_KEYRING_KEY,
        region: 'eu-west-1',
        table: 'signing-keys',
        dynamo: { endpoint: undefined, region: 'eu-west-1' },
      },
    });
  });

  it('requires the issuer and the keys only where logouts are signed, and reads no key elsewhere', () => {
    const unsigned = read({ ...PIPELINE, ...SIGNING, WEBHOOK_MASTER_KEY_FILE: '/tmp/master' }, false);
    expect(unsigned.logout.idTokenKeys).toBeUndefined();
    expect(unsigned.secrets).toBeUndefined();
    const error = configError(() => read(PIPELINE, true));
    expect(error.message).toContain('PUBLIC_BASE_URL is required');
    expect(error.message).toContain('ID_TOKEN_KEYRING_KEY');
  });

  it('refuses a loopback http stage application when the service is not on loopback itself', () => {
    const error = configError(() =>
      read({ ...PIPELINE, ...SIGNING, BOARD_APP_URL: 'http://127.0.0.1:3001/' }, true),
    );
    expect(error.message).toContain('BOARD_APP_URL');
  });
});

describe('WEBHOOK_ALLOW_LOOPBACK: where webhooks and logouts may go', () => {
  const LOCAL = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' };
  const read = (env: Record<string, string>) => {
    const problems: string[] = [];
    return { policy: readDestinationPolicy(env, problems), problems };
  };

  it('refuses loopback by default, on AWS and on the local runtime (which says how to allow it)', () => {
    expect(read({})).toEqual({ policy: { allowLoopback: false }, problems: [] });
    expect(read(LOCAL)).toEqual({
      policy: { allowLoopback: false, loopbackHint: ALLOW_LOOPBACK_HINT },
      problems: [],
    });
    expect(read({ ...LOCAL, WEBHOOK_ALLOW_LOOPBACK: '0' }).policy.allowLoopback).toBe(false);
  });

  it('allows loopback receivers on the local runtime when its operator sets it to 1', () => {
    expect(read({ ...LOCAL, WEBHOOK_ALLOW_LOOPBACK: '1' })).toEqual({
      policy: { allowLoopback: true },
      problems: [],
    });
  });

  it('is a configuration error anywhere but the local runtime, and for any other value', () => {
    const onAws = read({ WEBHOOK_ALLOW_LOOPBACK: '1' });
    expect(onAws.policy.allowLoopback).toBe(false);
    expect(onAws.problems).toEqual([
      'WEBHOOK_ALLOW_LOOPBACK is for the local runtime only (with DYNAMODB_ENDPOINT); on AWS, loopback receivers are always refused',
    ]);
    const wrong = read({ ...LOCAL, WEBHOOK_ALLOW_LOOPBACK: 'yes' });
    expect(wrong.policy.allowLoopback).toBe(false);
    expect(wrong.problems).toEqual([
      'WEBHOOK_ALLOW_LOOPBACK must be 1 (allow loopback receivers) or 0, got "yes"',
    ]);
  });

  it('is what create-webhook applies to endpoint URLs', () => {
    const env = { WEBHOOKS_TABLE: 'w', IDEMPOTENCY_TABLE: 'i', ...LOCAL, WEBHOOK_ALLOW_LOOPBACK: '1' };
    expect(readCreateWebhookConfig(env).destinations).toEqual({ allowLoopback: true });
    expect(() => readCreateWebhookConfig({ ...env, DYNAMODB_ENDPOINT: '', AWS_REGION: 'eu-west-1' })).toThrow(
      'WEBHOOK_ALLOW_LOOPBACK is for the local runtime only',
    );
  });
});
