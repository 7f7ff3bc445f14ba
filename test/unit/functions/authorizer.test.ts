import { createHash } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { AUTHORIZER_FAILED } from '#lib/adapters/http/middlewares/authorizer-errors';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { lambdaContext, METHOD_ARN, tokenEvent } from '#test/support/events';
import { apiKeyRecord } from '#test/support/fakes';
import { type AuthorizerHandler, handlerSuite, loadHandler } from '#test/support/harness';
import { stagePolicyDocument } from '#test/support/policies';

// The document client is created when the handler module loads, so the mock must exist first.
const ddb = mockClient(DynamoDBDocumentClient);

const API_KEYS_TABLE = 'test-api-keys';
const ACTIVE_KEY = `esk_${'a'.repeat(40)}-_A`;
const REVOKED_KEY = `esk_${'r'.repeat(40)}-_R`;
const UNKNOWN_KEY = `esk_${'u'.repeat(40)}-_U`;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** A last use no request can be an interval past: the key's use is recorded already, nothing is written. */
const USED_NOW = { lastUsedAt: '9999-12-31T23:59:59.999Z' };

function seedKeys() {
  ddb.on(GetCommand).resolves({});
  ddb.on(GetCommand, { TableName: API_KEYS_TABLE, Key: { keyHash: sha256(ACTIVE_KEY) } }).resolves({
    Item: apiKeyRecord(sha256(ACTIVE_KEY), { userId: 'owner-1', keyId: 'key_active', ...USED_NOW }),
  });
  ddb.on(GetCommand, { TableName: API_KEYS_TABLE, Key: { keyHash: sha256(REVOKED_KEY) } }).resolves({
    Item: apiKeyRecord(sha256(REVOKED_KEY), {
      keyId: 'key_revoked',
      status: 'REVOKED',
      revokedAt: '2026-01-02T00:00:00.000Z',
    }),
  });
}

const suite = handlerSuite({
  mock: ddb,
  load: (env) => loadHandler<AuthorizerHandler>(() => import('#functions/authorizer'), env),
  seed: seedKeys,
});

const authorize = (authorizationToken: string, methodArn = METHOD_ARN) =>
  suite.handler()(tokenEvent(authorizationToken, methodArn), lambdaContext('auth-request-1'));

/** The error the authorizer rejects with; fails the test if it allowed the request instead. */
async function refusal(authorizationToken: string, methodArn = METHOD_ARN): Promise<Error> {
  const outcome = await authorize(authorizationToken, methodArn).then(
    (policy) => ({ policy }),
    (error: unknown) => ({ error }),
  );
  expect(outcome, 'the authorizer must refuse, never allow').not.toHaveProperty('policy');
  return (outcome as { error: Error }).error;
}

/** API Gateway answers 401 only for exactly `Error('Unauthorized')`. */
function expectUnauthorized(error: Error) {
  expect(error).toBeInstanceOf(Error);
  expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
  expect(error.message).toBe('Unauthorized');
}

/** Any other error fails the authorizer: API Gateway answers 503, and the key is not blamed. */
function expectAuthorizerFailure(error: Error) {
  expect(error).toBeInstanceOf(Error);
  expect(error.message).toBe(AUTHORIZER_FAILED);
}

describe('authorizer: a valid key', () => {
  it('returns an Allow policy for the whole stage with the key owner and key id in the context', async () => {
    await expect(authorize(`Bearer ${ACTIVE_KEY}`)).resolves.toEqual({
      principalId: 'owner-1',
      policyDocument: stagePolicyDocument('Allow'),
      context: { userId: 'owner-1', keyId: 'key_active' },
      usageIdentifierKey: 'usage_key_active',
    });
  });

  it('names the key’s usage plan entry, and passes on the key’s own limits from the same read', async () => {
    ddb.on(GetCommand, { TableName: API_KEYS_TABLE, Key: { keyHash: sha256(ACTIVE_KEY) } }).resolves({
      Item: {
        ...apiKeyRecord(sha256(ACTIVE_KEY), { userId: 'owner-1', keyId: 'key_active', ...USED_NOW }),
        rateLimit: 3,
        burstLimit: 7,
      },
    });
    const policy = await authorize(`Bearer ${ACTIVE_KEY}`);
    expect(policy.usageIdentifierKey).toBe('usage_key_active');
    expect(policy.context).toEqual({ userId: 'owner-1', keyId: 'key_active', rateLimit: 3, burstLimit: 7 });
    expect(ddb.calls()).toHaveLength(1);
  });

  it('looks the key up by its SHA-256 with exactly one consistent DynamoDB read', async () => {
    await authorize(`Bearer ${ACTIVE_KEY}`);
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: API_KEYS_TABLE,
      Key: { keyHash: sha256(ACTIVE_KEY) },
      ConsistentRead: true,
    });
  });

  it('records a key’s first use with one conditional write on the key, once its record is read', async () => {
    ddb.on(GetCommand, { TableName: API_KEYS_TABLE, Key: { keyHash: sha256(ACTIVE_KEY) } }).resolves({
      Item: apiKeyRecord(sha256(ACTIVE_KEY), { userId: 'owner-1', keyId: 'key_active' }),
    });
    ddb.on(UpdateCommand).resolves({});
    await authorize(`Bearer ${ACTIVE_KEY}`);
    const [update] = ddb.commandCalls(UpdateCommand);
    expect(update?.args[0].input).toMatchObject({
      TableName: API_KEYS_TABLE,
      Key: { keyHash: sha256(ACTIVE_KEY) },
      UpdateExpression: 'SET lastUsedAt = :at',
      ConditionExpression:
        'attribute_exists(keyHash) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :stale)',
    });
    // The stage's default cache period (300 s), as the stack passes no AUTHORIZER_CACHE_TTL_SECONDS here.
    const { ':at': at, ':stale': stale } = update?.args[0].input.ExpressionAttributeValues ?? {};
    expect(Date.parse(at) - Date.parse(stale)).toBe(300_000);
  });

  it.each(['bearer', 'BEARER'])('accepts the scheme written as %s', async (scheme) => {
    await expect(authorize(`${scheme} ${ACTIVE_KEY}`)).resolves.toMatchObject({
      context: { userId: 'owner-1', keyId: 'key_active' },
    });
  });
});

/** A Deny policy for the whole stage: API Gateway's ACCESS_DENIED, which the stack answers "The API key is invalid". */
const DENY = {
  principalId: 'invalid-api-key',
  policyDocument: stagePolicyDocument('Deny'),
};

describe('authorizer: refusals', () => {
  it.each([
    ['an unknown key', `Bearer ${UNKNOWN_KEY}`],
    ['a revoked key', `Bearer ${REVOKED_KEY}`],
  ])('denies %s with a Deny policy after one DynamoDB read', async (_name, header) => {
    await expect(authorize(header)).resolves.toEqual(DENY);
    expect(ddb.calls()).toHaveLength(1);
  });

  it.each([
    ['a malformed key', 'Bearer not-a-key'],
    ['a truncated key', `Bearer ${ACTIVE_KEY.slice(0, -1)}`],
  ])('denies %s with a Deny policy without touching DynamoDB', async (_name, header) => {
    await expect(authorize(header)).resolves.toEqual(DENY);
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([
    ['a missing header', ''],
    ['a wrong scheme', `Basic ${ACTIVE_KEY}`],
    ['a key without scheme', ACTIVE_KEY],
    ['a scheme without key', 'Bearer '],
  ])('rejects %s with exactly Error("Unauthorized") without touching DynamoDB', async (_name, header) => {
    expectUnauthorized(await refusal(header));
    expect(ddb.calls()).toHaveLength(0);
  });

  it('rejects when API Gateway sends no token at all', async () => {
    const event = { type: 'TOKEN', methodArn: METHOD_ARN } as unknown as APIGatewayTokenAuthorizerEvent;
    const error = await suite
      .handler()(event, lambdaContext())
      .catch((e: Error) => e);
    expectUnauthorized(error as Error);
  });

  it.each(['throttled', 'internal', 'connectionRefused', 'timeout', 'accessDenied', 'validation'] as const)(
    'refuses without blaming the key when DynamoDB fails (%s): an authorizer failure, not "Unauthorized"',
    async (kind) => {
      ddb.on(GetCommand).rejects(dynamoErrors[kind]());
      expectAuthorizerFailure(await refusal(`Bearer ${ACTIVE_KEY}`));
      expect(ddb.calls()).toHaveLength(1);
    },
  );

  it('refuses on a malformed methodArn even for a valid key, as an authorizer failure', async () => {
    expectAuthorizerFailure(await refusal(`Bearer ${ACTIVE_KEY}`, 'not-an-arn'));
  });
});

describe('authorizer: logs', () => {
  it('never contain the API key, and carry the request id', async () => {
    await authorize(`Bearer ${ACTIVE_KEY}`);
    await authorize(`Bearer ${UNKNOWN_KEY}`).catch(() => undefined);
    await authorize(`Bearer ${REVOKED_KEY}`).catch(() => undefined);
    await authorize(`Basic ${ACTIVE_KEY}`).catch(() => undefined);
    ddb.on(GetCommand).rejects(dynamoErrors.throttled());
    await authorize(`Bearer ${ACTIVE_KEY}`).catch(() => undefined);

    const text = suite.logs();
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const key of [ACTIVE_KEY, UNKNOWN_KEY, REVOKED_KEY]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(4, 30));
    }
    expect(lines.every((line) => line.requestId === 'auth-request-1')).toBe(true);
    expect(lines.some((line) => line.level === 'error')).toBe(true);
  });
});
