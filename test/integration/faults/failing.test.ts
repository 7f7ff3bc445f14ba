import { vi } from 'vitest';
import { describeOutage, useRuntimeBehindProxy } from '#test/support/fault-suite';

// Every attempt fails at once here: the functions' clients keep their timeouts and retry without the
// SDK's backoff, which waits up to seconds between throttled attempts.
vi.mock('#lib/platform/aws-clients', async (original) =>
  (await import('#test/support/short-aws-limits')).withQuickRetries(await original()),
);

/** DynamoDB answers at once, but with a failure, or not at all. */
const env = useRuntimeBehindProxy();
describeOutage(env, 'refuses connections', { kind: 'refuse' });
describeOutage(env, 'resets connections without answering', { kind: 'reset' });
describeOutage(env, 'answers InternalServerError', { kind: 'internal-error' });
describeOutage(env, 'throttles (ProvisionedThroughputExceededException)', { kind: 'throttle' });
describeOutage(env, 'throttles (ThrottlingException)', { kind: 'throttle', type: 'ThrottlingException' });
