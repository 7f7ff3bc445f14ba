import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_API_GATEWAY_LIMITS, main, runAdmin, USAGE_HINT } from '#admin/cli';
import { ADMIN_COMMANDS } from '#admin/commands';
import { SDK_LOGGER_MIDDLEWARE } from '#lib/platform/aws-clients';
import { mockedDocumentClient } from '#test/support/dynamo-mock';
import { apiKeyRecord } from '#test/support/fakes';

const { ddb } = mockedDocumentClient();
const apiGateway = mockClient(APIGatewayClient);
afterAll(() => {
  apiGateway.restore();
});

const AWS_ENV = { AWS_REGION: 'eu-west-1', API_KEYS_TABLE: 'keys-prod', USAGE_PLAN_ID: 'plan-default' };
const KEY_ID = 'key_0123456789abcdef01234567';
const STORED = (() => {
  const { limits: _none, ...item } = apiKeyRecord('f'.repeat(64), { keyId: KEY_ID });
  return item;
})();

/** Every call to either service, in the order the CLI made them. */
let order: string[];

beforeEach(() => {
  apiGateway.reset();
  order = [];
  const track = (name: string, output: object) => () => {
    order.push(name);
    return output;
  };
  ddb.on(PutCommand).callsFake(track('dynamodb PutItem', {}));
  ddb.on(ScanCommand).callsFake(track('dynamodb Scan', { Items: [] }));
  ddb.on(QueryCommand).callsFake(track('dynamodb Query', { Items: [STORED] }));
  ddb
    .on(UpdateCommand)
    .callsFake(track('dynamodb UpdateItem', { Attributes: { ...STORED, rateLimit: 5, burstLimit: 10 } }));
  apiGateway.on(GetApiKeysCommand).callsFake(track('apigateway GetApiKeys', { items: [] }));
  apiGateway.on(CreateApiKeyCommand).callsFake(track('apigateway CreateApiKey', { id: 'ak-1' }));
  apiGateway.on(CreateUsagePlanKeyCommand).callsFake(track('apigateway CreateUsagePlanKey', {}));
  apiGateway.on(DeleteUsagePlanKeyCommand).callsFake(track('apigateway DeleteUsagePlanKey', {}));
  apiGateway.on(DeleteApiKeyCommand).callsFake(track('apigateway DeleteApiKey', {}));
  apiGateway.on(GetUsagePlanCommand).callsFake(
    track('apigateway GetUsagePlan', {
      id: 'plan-default',
      name: 'embed-session-prod',
      apiStages: [{ apiId: 'api-1', stage: 'prod' }],
    }),
  );
  apiGateway
    .on(GetUsagePlansCommand)
    .callsFake(track('apigateway GetUsagePlans', { items: [{ id: 'plan-default', apiStages: [] }] }));
  apiGateway.on(CreateUsagePlanCommand).callsFake(track('apigateway CreateUsagePlan', { id: 'plan-own' }));
});

describe('admin CLI against AWS: API Gateway follows every key', () => {
  it('create-api-key registers the key in the USAGE_PLAN_ID plan before storing it', async () => {
    const created = (await runAdmin(['create-api-key', '--user', 'alice'], AWS_ENV)) as { keyId: string };
    expect(order).toEqual([
      'apigateway GetApiKeys',
      'apigateway CreateApiKey',
      'apigateway CreateUsagePlanKey',
      'dynamodb PutItem',
    ]);
    expect(apiGateway.commandCalls(CreateApiKeyCommand)[0]?.args[0].input.value).toBe(
      `usage_${created.keyId}`,
    );
    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input).toEqual({
      usagePlanId: 'plan-default',
      keyId: 'ak-1',
      keyType: 'API_KEY',
    });
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.TableName).toBe('keys-prod');
  });

  it('set-rate-limit stores the limits first, then moves the key to a plan of its own', async () => {
    const result = await runAdmin(
      ['set-rate-limit', '--key-id', KEY_ID, '--rate', '5', '--burst', '10'],
      AWS_ENV,
    );
    expect(result).toMatchObject({ keyId: KEY_ID, limits: { rate: 5, burst: 10 } });
    expect(order.slice(0, 2)).toEqual(['dynamodb Query', 'dynamodb UpdateItem']);
    expect(order.filter((call) => !call.includes(' Get'))).toEqual([
      'dynamodb Query',
      'dynamodb UpdateItem',
      'apigateway CreateApiKey',
      'apigateway CreateUsagePlan',
      'apigateway CreateUsagePlanKey',
    ]);
    expect(apiGateway.commandCalls(CreateUsagePlanCommand)[0]?.args[0].input.throttle).toEqual({
      rateLimit: 5,
      burstLimit: 10,
    });
  });

  it('sends API Gateway calls through a client under the one call policy (attempt deadlines, no SDK logger)', async () => {
    await runAdmin(['create-api-key', '--user', 'alice'], AWS_ENV);
    const client = apiGateway.call(0).thisValue as APIGatewayClient;
    const names = client.middlewareStack.identify().map((entry) => entry.split(' - ')[0]);
    expect(names).toContain('requestDeadline');
    expect(names).not.toContain(SDK_LOGGER_MIDDLEWARE);
    // The policy's HTTP handler, whose timeouts fail an attempt (the SDK's default waits for ever).
    expect(Object.getPrototypeOf(await client.config.requestHandler)).toBe(NodeHttpHandler.prototype);
    expect(await client.config.maxAttempts()).toBe(ADMIN_API_GATEWAY_LIMITS.maxAttempts);
  });

  it('revoke-api-key revokes in DynamoDB, then deletes the API Gateway key', async () => {
    apiGateway.on(GetApiKeysCommand).callsFake(() => ({ items: [{ id: 'ak-1', name: `usage_${KEY_ID}` }] }));
    ddb.on(UpdateCommand).resolves({ Attributes: { ...STORED, status: 'REVOKED', revokedAt: 'now' } });
    await runAdmin(['revoke-api-key', '--key-id', KEY_ID], AWS_ENV);
    expect(apiGateway.commandCalls(DeleteApiKeyCommand)[0]?.args[0].input).toEqual({ apiKey: 'ak-1' });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  });

  it.each([
    ['create-api-key', '--user', 'alice'],
    ['revoke-api-key', '--key-id', KEY_ID],
    ['set-rate-limit', '--key-id', KEY_ID, '--rate', '5', '--burst', '10'],
    ['clear-rate-limit', '--key-id', KEY_ID],
    ['sync-rate-limits'],
  ])('refuses %s without USAGE_PLAN_ID, before any call', async (...args) => {
    const { USAGE_PLAN_ID: _omitted, ...withoutPlan } = AWS_ENV;
    await expect(runAdmin(args, withoutPlan)).rejects.toThrow(
      /^USAGE_PLAN_ID is required against AWS \(the UsagePlanId stack output\)/,
    );
    expect(order).toEqual([]);
  });

  it('needs no USAGE_PLAN_ID for commands that leave keys alone', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await expect(
      runAdmin(['list-boards'], { ...AWS_ENV, BOARDS_TABLE: 'boards-prod' }),
    ).resolves.toBeDefined();
    expect(apiGateway.calls()).toHaveLength(0);
  });
});

describe('admin CLI against the local runtime', () => {
  it('writes only DynamoDB: the local gateway reads the limits from the key record', async () => {
    const local = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', USAGE_PLAN_ID: 'plan-default' };
    await runAdmin(['create-api-key', '--user', 'alice'], local);
    await runAdmin(['set-rate-limit', '--key-id', KEY_ID, '--rate', '5', '--burst', '10'], local);
    await runAdmin(['sync-rate-limits'], local);
    expect(apiGateway.calls()).toHaveLength(0);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  });
});

describe('admin CLI: rate limit options', () => {
  it.each([
    [['--rate', 'fast', '--burst', '10'], '--rate must be an integer from 1 to 10000'],
    [['--rate', '2.5', '--burst', '10'], '--rate must be an integer from 1 to 10000'],
    [['--rate', '5', '--burst', '0'], '--burst must be an integer from 1 to 5000'],
    [['--rate', '5', '--burst', '5001'], '--burst must be an integer from 1 to 5000'],
  ])('refuses %j before any call', async (options, message) => {
    const local = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' };
    await expect(runAdmin(['set-rate-limit', '--key-id', KEY_ID, ...options], local)).rejects.toThrow(
      message,
    );
    expect(order).toEqual([]);
  });

  it('needs both --rate and --burst', async () => {
    const local = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' };
    await expect(runAdmin(['set-rate-limit', '--key-id', KEY_ID, '--rate', '5'], local)).rejects.toThrow(
      'set-rate-limit needs --burst',
    );
  });
});

describe('admin CLI: help and usage mistakes', () => {
  const runMain = async (argv: string[], env: Record<string, string> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, env, { out: (text) => out.push(text), err: (text) => err.push(text) });
    return { code, out: out.join(''), err: err.join('') };
  };

  it.each(['help', '--help', '-h'])('`%s` prints every command on stdout and exits 0', async (word) => {
    const { code, out, err } = await runMain([word]);
    expect(code).toBe(0);
    expect(err).toBe('');
    for (const command of ADMIN_COMMANDS) expect(out).toContain(`  ${command.name}`);
  });

  it.each([
    [['bogus'], 'error: Unknown command "bogus"'],
    [[], 'error: No command given'],
    [['create-board', '--nope', 'x'], 'error: create-board:'],
    [['add-member', '--org', 'o'], 'error: add-member needs --user'],
  ])('answers %j with one line and the hint, on stderr, exit 2', async (argv, first) => {
    const { code, out, err } = await runMain(argv, { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' });
    expect(code).toBe(2);
    expect(out).toBe('');
    const lines = err.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(first);
    expect(lines[1]).toBe(USAGE_HINT);
  });

  it('takes the argument after an option as its value, even one starting with "-" (a base64url key id)', async () => {
    const seen: Array<string | undefined> = [];
    const echo = {
      name: 'echo',
      options: ['kid'],
      usage: ['echo --kid <kid>'],
      storage: false as const,
      run: async (context: { need(option: string): string }) => {
        seen.push(context.need('kid'));
        return {};
      },
    };
    for (const argv of [
      ['echo', '--kid', '-Ab_c'],
      ['echo', '--kid=-Ab_c'],
    ])
      await runAdmin(argv, {}, [echo]);
    expect(seen).toEqual(['-Ab_c', '-Ab_c']);
  });

  it('runs `listen` without any DynamoDB setting: it only talks HTTP to the service', async () => {
    const { code, err } = await runMain([
      'listen',
      '--api-key',
      'esk_x',
      '--forward-to',
      'https://r.example',
    ]);
    // It got as far as calling the service (none runs at the default base URL in this test).
    expect(err).not.toContain('AWS_REGION');
    expect(err).not.toContain('DYNAMODB_ENDPOINT');
    expect(code).toBe(1);
  });
});
