import { describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '#lib/domain/errors';
import { dynamoCall, isTransientDynamoError } from '#lib/dynamodb/errors';
import { dynamoErrors } from '#test/support/dynamo-errors';

describe('isTransientDynamoError', () => {
  it.each(['throttled', 'throttling', 'internal', 'http503', 'connectionRefused', 'timeout'] as const)(
    'counts %s as an outage worth a 503',
    (kind) => {
      expect(isTransientDynamoError(dynamoErrors[kind]())).toBe(true);
    },
  );

  it.each(['RequestLimitExceeded', 'ServiceUnavailable', 'RequestTimeout', 'RequestTimeoutException'])(
    'counts an error named %s as an outage',
    (name) => {
      expect(isTransientDynamoError(Object.assign(new Error('x'), { name }))).toBe(true);
    },
  );

  it.each(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'])(
    'counts the network error %s',
    (code) => {
      expect(isTransientDynamoError(Object.assign(new Error('socket'), { code }))).toBe(true);
    },
  );

  it.each(['conditionFailed', 'validation', 'accessDenied'] as const)(
    'does not count %s, which is a problem with the request',
    (kind) => {
      expect(isTransientDynamoError(dynamoErrors[kind]())).toBe(false);
    },
  );

  it('does not count non-errors', () => {
    expect(isTransientDynamoError('ProvisionedThroughputExceededException')).toBe(false);
    expect(isTransientDynamoError(undefined)).toBe(false);
  });
});

describe('dynamoCall', () => {
  it('returns the result of a successful call', async () => {
    await expect(dynamoCall(async () => 42)).resolves.toBe(42);
  });

  it('turns a transient failure into StorageUnavailableError with the original as cause', async () => {
    const original = dynamoErrors.throttled();
    const error = await dynamoCall(async () => {
      throw original;
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as Error).cause).toBe(original);
  });

  it('rethrows any other failure unchanged', async () => {
    const original = dynamoErrors.validation();
    await expect(
      dynamoCall(async () => {
        throw original;
      }),
    ).rejects.toBe(original);
  });
});
