import { describe, expect, it } from 'vitest';
import { dynamoCall } from '#lib/adapters/dynamodb/errors';
import { StorageUnavailableError } from '#lib/domain/errors';
import { dynamoErrors } from '#test/support/dynamo-errors';

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
