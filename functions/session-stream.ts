import { processStreamRecords } from '#lib/adapters/dynamodb/change-feed';
import type { BatchResponse, StreamRecord } from '#lib/adapters/dynamodb/stream-records';
import { environmentOf } from '#lib/definitions/environment';
import { createLogger, describeError } from '#lib/platform/logger';
import { sessionStreamDeps } from './wiring';

const deps = sessionStreamDeps(environmentOf('sessionStream', process.env));
const logger = createLogger({ function: 'session-stream' });

/**
 * The sessions table's stream consumer: records and publishes each record's events. The first record that
 * fails, and every one after it, come back in `batchItemFailures`: Lambda bisects and retries from there.
 */
export const handler = async (event: { Records?: StreamRecord[] }): Promise<BatchResponse> =>
  processStreamRecords(deps, event.Records ?? [], (error, context) =>
    logger.error('stream record failed; Lambda retries it', { ...context, ...describeError(error) }),
  );
