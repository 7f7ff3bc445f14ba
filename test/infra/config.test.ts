import { describe, expect, it } from 'vitest';
import { CONTEXT_DEFAULTS, type ContextKey, InfraConfigError, readInfraConfig } from '#infra/config';
import { isEmbedOrigin } from '#lib/domain/embed-origins';
import { CDK_JSON_CONTEXT } from '#test/support/infra';

const read = (context: Partial<Record<ContextKey, unknown>>) => readInfraConfig((key) => context[key]);

const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1234-5678-9abc-def012345678';

describe('CDK context defaults', () => {
  it('falls back to documented defaults when no context is given', () => {
    expect(read({})).toEqual({
      stageName: 'prod',
      throttleRateLimit: 100,
      throttleBurstLimit: 200,
      apiKeyRateLimit: 50,
      apiKeyBurstLimit: 100,
      authorizerCacheTtlSeconds: 300,
      logRetentionDays: 30,
      logLevel: 'info',
      publicBaseUrl: undefined,
      customDomain: undefined,
      allowedEmbedOrigins: [],
      frameAncestors: 'https: http://localhost:* http://127.0.0.1:*',
      alarmEmail: undefined,
      metadataMaxBytes: undefined,
      boardAppUrl: undefined,
      embedPageRateLimit: 1000,
      embedPageProvisionedConcurrency: 0,
      webAclArn: undefined,
      dashboard: true,
      disableExecuteApiEndpoint: true,
      apiGatewayAccountRole: true,
      deployedIndexes: undefined,
    });
  });

  it('lists in cdk.json the same defaults as the code', () => {
    expect(readInfraConfig((key) => CDK_JSON_CONTEXT[key])).toEqual(read({}));
    for (const [key, value] of Object.entries(CONTEXT_DEFAULTS)) expect(CDK_JSON_CONTEXT[key]).toEqual(value);
  });
});

describe('CDK context: the embed page’s limit per client', () => {
  it('takes a limit within AWS WAF’s bounds and an existing regional web ACL', () => {
    const arn =
      'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared-acl/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab';
    expect(read({ embedPageRateLimit: '50', webAclArn: arn })).toMatchObject({
      embedPageRateLimit: 50,
      webAclArn: arn,
    });
  });

  it.each([
    [{ embedPageRateLimit: 9 }, 'embedPageRateLimit'],
    [{ embedPageRateLimit: 1.5 }, 'embedPageRateLimit'],
    [{ embedPageProvisionedConcurrency: -1 }, 'embedPageProvisionedConcurrency'],
    [{ embedPageProvisionedConcurrency: 2.5 }, 'embedPageProvisionedConcurrency'],
    [{ embedPageProvisionedConcurrency: 1001 }, 'embedPageProvisionedConcurrency'],
    [{ webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:global/webacl/cf/abc' }, 'regional AWS WAF web ACL'],
  ])('refuses %j, naming it', (context, named) => {
    expect(() => read(context)).toThrow(named);
  });
});

describe('CDK context: yes/no settings', () => {
  it.each(['dashboard', 'disableExecuteApiEndpoint', 'apiGatewayAccountRole'] as const)(
    'reads %s from JSON booleans and from -c words, and refuses anything else',
    (key) => {
      expect(read({ [key]: false })[key]).toBe(false);
      expect(read({ [key]: 'false' })[key]).toBe(false);
      expect(read({ [key]: 'true' })[key]).toBe(true);
      expect(() => read({ [key]: 'no' })).toThrow(`${key} must be true or false, got "no"`);
    },
  );
});

describe('CDK context: boardAppUrl', () => {
  it('takes an https board application as the stage’s default', () => {
    expect(read({ boardAppUrl: 'https://board.example.com/app' }).boardAppUrl).toBe(
      'https://board.example.com/app',
    );
  });

  it.each(['http://board.example.com', 'http://127.0.0.1:3001/', 'not a url'])('refuses %j', (value) => {
    expect(() => read({ boardAppUrl: value })).toThrow('boardAppUrl');
  });
});

describe('CDK context values', () => {
  it('accepts the string forms that `cdk -c key=value` passes', () => {
    const config = read({
      stageName: 'staging',
      throttleRateLimit: '12.5',
      throttleBurstLimit: '40',
      apiKeyRateLimit: '5',
      apiKeyBurstLimit: '10',
      authorizerCacheTtlSeconds: '0',
      logRetentionDays: '365',
      logLevel: 'WARN',
      allowedEmbedOrigins: 'https://app.example.com, http://localhost:3000',
      alarmEmail: 'ops@example.com',
      metadataMaxBytes: '65536',
      maxSessionLifetimeSeconds: '86400',
    });
    expect(config).toMatchObject({
      maxSessionLifetimeSeconds: 86_400,
      stageName: 'staging',
      throttleRateLimit: 12.5,
      throttleBurstLimit: 40,
      apiKeyRateLimit: 5,
      apiKeyBurstLimit: 10,
      authorizerCacheTtlSeconds: 0,
      logRetentionDays: 365,
      logLevel: 'warn',
      allowedEmbedOrigins: ['https://app.example.com', 'http://localhost:3000'],
      alarmEmail: 'ops@example.com',
      metadataMaxBytes: 65536,
    });
  });

  it.each([
    ['https://app.example.com', true],
    ['https://*.example.com', true],
    ['http://localhost:3000', true],
    ['https://app.example.com/', false],
    ['https://app.*.example.com', false],
    ["'self'", false],
  ])('decides allowedEmbedOrigins %j as a board’s own list is decided (%s)', (origin, accepted) => {
    expect(isEmbedOrigin(origin)).toBe(accepted);
    const stage = () => read({ allowedEmbedOrigins: [origin] });
    if (accepted) expect(stage().allowedEmbedOrigins).toEqual([origin]);
    else expect(stage).toThrow('allowedEmbedOrigins entries must be origins');
  });

  it('accepts allowedEmbedOrigins as a JSON array, in cdk.json or as a string', () => {
    expect(read({ allowedEmbedOrigins: ['https://a.example.com'] }).allowedEmbedOrigins).toEqual([
      'https://a.example.com',
    ]);
    expect(read({ allowedEmbedOrigins: '["https://b.example.com"]' }).allowedEmbedOrigins).toEqual([
      'https://b.example.com',
    ]);
  });

  it('drops the trailing slash of publicBaseUrl', () => {
    expect(read({ publicBaseUrl: 'https://boards.example.com/embed-root/' }).publicBaseUrl).toBe(
      'https://boards.example.com/embed-root',
    );
  });

  it('derives the public base URL from the custom domain unless publicBaseUrl is given', () => {
    const domain = { customDomainName: 'API.example.com', certificateArn: CERTIFICATE_ARN };
    expect(read(domain)).toMatchObject({
      customDomain: { domainName: 'api.example.com', certificateArn: CERTIFICATE_ARN },
      publicBaseUrl: 'https://api.example.com',
    });
    expect(read({ ...domain, publicBaseUrl: 'https://cdn.example.com' }).publicBaseUrl).toBe(
      'https://cdn.example.com',
    );
  });
});

describe('CDK context validation', () => {
  it.each<[ContextKey | 'customDomain', Partial<Record<ContextKey, unknown>>, string]>([
    ['stageName', { stageName: 'prod stage' }, 'stageName must start with a letter'],
    ['stageName', { stageName: '1prod' }, 'stageName must start with a letter'],
    ['throttleRateLimit', { throttleRateLimit: 0 }, 'throttleRateLimit must be a positive number'],
    ['throttleRateLimit', { throttleRateLimit: 'fast' }, 'throttleRateLimit must be a positive number'],
    [
      'throttleBurstLimit',
      { throttleBurstLimit: 2.5 },
      'throttleBurstLimit must be an integer from 1 to 5000',
    ],
    [
      'throttleBurstLimit',
      { throttleBurstLimit: '-1' },
      'throttleBurstLimit must be an integer from 1 to 5000',
    ],
    ['authorizerCacheTtlSeconds', { authorizerCacheTtlSeconds: 3601 }, 'from 0 to 3600'],
    ['authorizerCacheTtlSeconds', { authorizerCacheTtlSeconds: '-5' }, 'from 0 to 3600'],
    ['authorizerCacheTtlSeconds', { authorizerCacheTtlSeconds: '1.5' }, 'from 0 to 3600'],
    ['logRetentionDays', { logRetentionDays: 31 }, 'logRetentionDays must be one of 1, 3, 5, 7, 14, 30'],
    ['logRetentionDays', { logRetentionDays: 'forever' }, 'logRetentionDays must be one of'],
    ['logLevel', { logLevel: 'verbose' }, 'logLevel must be one of debug, info, warn, error'],
    ['publicBaseUrl', { publicBaseUrl: 'http://boards.example.com' }, 'publicBaseUrl must use https'],
    [
      'publicBaseUrl',
      { publicBaseUrl: 'boards.example.com' },
      'publicBaseUrl must be an absolute http(s) URL',
    ],
    [
      'publicBaseUrl',
      { publicBaseUrl: 'https://boards.example.com/?a=1' },
      'must not have a query or fragment',
    ],
    [
      'customDomain',
      { customDomainName: 'api.example.com' },
      'customDomainName and certificateArn must be given together',
    ],
    [
      'customDomain',
      { customDomainName: 'not a domain', certificateArn: CERTIFICATE_ARN },
      'must be a DNS name',
    ],
    [
      'customDomain',
      { customDomainName: 'api.example.com', certificateArn: 'arn:aws:iam::1:role/x' },
      'ACM certificate ARN',
    ],
    ['allowedEmbedOrigins', { allowedEmbedOrigins: 'https://app.example.com/path' }, 'must be origins'],
    ['allowedEmbedOrigins', { allowedEmbedOrigins: 'http://app.example.com' }, 'must be origins'],
    ['allowedEmbedOrigins', { allowedEmbedOrigins: [1, 2] }, 'must be a list of origins'],
    // Valid origins that the embed function's own CSP check refuses: synth must not let them through.
    ['allowedEmbedOrigins', { allowedEmbedOrigins: 'https://app_x.example.com' }, 'must be origins'],
    ['allowedEmbedOrigins', { allowedEmbedOrigins: 'https://[::1]' }, 'must be origins'],
    [
      'publicBaseUrl',
      { publicBaseUrl: 'https://user:secret@boards.example.com' },
      'publicBaseUrl must not contain a user name or password',
    ],
    ['throttleRateLimit', { throttleRateLimit: 10_001 }, 'at most 10000'],
    [
      'throttleBurstLimit',
      { throttleBurstLimit: 5_001 },
      'throttleBurstLimit must be an integer from 1 to 5000',
    ],
    ['allowedEmbedOrigins', { allowedEmbedOrigins: '[not json' }, 'not a valid JSON array'],
    ['alarmEmail', { alarmEmail: 'ops' }, 'alarmEmail must be an e-mail address'],
    // The per-key limits follow the admin CLI's and the local gateway's rules: whole requests, rate ≥ 1/s.
    ['apiKeyRateLimit', { apiKeyRateLimit: 0 }, 'apiKeyRateLimit must be an integer from 1 to 10000'],
    ['apiKeyRateLimit', { apiKeyRateLimit: '2.5' }, 'apiKeyRateLimit must be an integer from 1 to 10000'],
    ['apiKeyRateLimit', { apiKeyRateLimit: 10_001 }, 'apiKeyRateLimit must be an integer from 1 to 10000'],
    ['apiKeyRateLimit', { apiKeyRateLimit: 'fast' }, 'apiKeyRateLimit must be an integer from 1 to 10000'],
    ['apiKeyBurstLimit', { apiKeyBurstLimit: 0 }, 'apiKeyBurstLimit must be an integer from 1 to 5000'],
    ['apiKeyBurstLimit', { apiKeyBurstLimit: '-3' }, 'apiKeyBurstLimit must be an integer from 1 to 5000'],
    ['apiKeyBurstLimit', { apiKeyBurstLimit: 5_001 }, 'apiKeyBurstLimit must be an integer from 1 to 5000'],
    [
      'metadataMaxBytes',
      { metadataMaxBytes: 400_000 },
      'metadataMaxBytes must be an integer from 1 to 116736',
    ],
    // The old ceiling (350 KiB) let an event outgrow its EventBridge entry and its delivery message.
    [
      'metadataMaxBytes',
      { metadataMaxBytes: 358_400 },
      'metadataMaxBytes must be an integer from 1 to 116736, got "358400" (so that every event carrying a session’s metadata fits an EventBridge entry and a webhook delivery message, 256 KiB each)',
    ],
    ['metadataMaxBytes', { metadataMaxBytes: 116_737 }, 'fits an EventBridge entry'],
    [
      'maxSessionLifetimeSeconds',
      { maxSessionLifetimeSeconds: 30 },
      'maxSessionLifetimeSeconds must be an integer from 60 to 315360000',
    ],
  ])('rejects an invalid %s (%j) with a clear message', (_, context, message) => {
    expect(() => read(context)).toThrowError(InfraConfigError);
    expect(() => read(context)).toThrowError(message);
  });

  it('reports every invalid value at once', () => {
    try {
      read({ stageName: '', throttleRateLimit: -1, authorizerCacheTtlSeconds: 9999, logRetentionDays: 2 });
      expect.unreachable();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/^Invalid CDK context: /);
      expect(message).toContain('throttleRateLimit');
      expect(message).toContain('authorizerCacheTtlSeconds');
      expect(message).toContain('logRetentionDays');
    }
  });
});
