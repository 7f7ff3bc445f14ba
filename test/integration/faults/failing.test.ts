import { describeOutage, useRuntimeBehindProxy } from '#test/support/fault-suite';

/** DynamoDB answers at once, but with a failure, or not at all. */
const env = useRuntimeBehindProxy();
describeOutage(env, 'refuses connections', { kind: 'refuse' });
describeOutage(env, 'resets connections without answering', { kind: 'reset' });
describeOutage(env, 'answers InternalServerError', { kind: 'internal-error' });
describeOutage(env, 'throttles (ProvisionedThroughputExceededException)', { kind: 'throttle' });
describeOutage(env, 'throttles (ThrottlingException)', { kind: 'throttle', type: 'ThrottlingException' });
