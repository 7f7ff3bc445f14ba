import { describe, expect, it } from 'vitest';
import { AUTHORIZER_FAILED, authorizerErrors } from '#lib/adapters/http/middlewares/authorizer-errors';
import { InvalidApiKeyError, MissingApiKeyError, StorageUnavailableError } from '#lib/domain/errors';
import { lambdaContext, tokenEvent } from '#test/support/events';
import { failingHandler } from '#test/support/failing-handler';

const failing = (error: unknown) =>
  failingHandler(authorizerErrors, error, tokenEvent('Bearer x'), lambdaContext('auth-req-1'));

async function rejection(invoke: () => Promise<unknown>): Promise<Error> {
  const outcome = await invoke().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  expect(outcome).toHaveProperty('error');
  return (outcome as { error: Error }).error;
}

describe('authorizerErrors', () => {
  it('turns a missing key into exactly Error("Unauthorized"), API Gateway\'s UNAUTHORIZED 401', async () => {
    const error = await rejection(failing(new MissingApiKeyError('no Bearer credential')).invoke);
    expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
    expect(error.message).toBe('Unauthorized');
  });

  it("turns an invalid key into a Deny policy for the stage, API Gateway's ACCESS_DENIED", async () => {
    const policy = await failing(new InvalidApiKeyError('API key is revoked')).invoke();
    expect(policy.policyDocument.Statement).toEqual([
      expect.objectContaining({ Effect: 'Deny', Action: 'execute-api:Invoke' }),
    ]);
    expect(policy.context).toBeUndefined();
    expect(policy.usageIdentifierKey).toBeUndefined();
  });

  it.each([
    ['a storage outage', new StorageUnavailableError()],
    ['a bug', new TypeError('x is undefined')],
    ['a thrown string', 'oops'],
  ])('fails the authorizer on %s without blaming the key: never "Unauthorized"', async (_name, thrown) => {
    const error = await rejection(failing(thrown).invoke);
    expect(error.message).not.toBe('Unauthorized');
    expect(error.message).toBe(AUTHORIZER_FAILED);
  });

  it('logs a refused key at info level with the reason and the request id', async () => {
    const { invoke, lines } = failing(new InvalidApiKeyError('API key is revoked'));
    await invoke();
    expect(lines()).toEqual([
      expect.objectContaining({ level: 'info', requestId: 'auth-req-1', reason: 'API key is revoked' }),
    ]);
  });

  it('logs a failure at error level with the request id, so the alarm on error lines fires', async () => {
    const { invoke, lines } = failing(new StorageUnavailableError());
    await rejection(invoke);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'error',
        requestId: 'auth-req-1',
        errorName: 'StorageUnavailableError',
      }),
    ]);
  });
});
