import { startEmbeddedDynamo } from '#local/dynamodb';
import { startDynamoDbLocal } from './dynamodb-local';

/**
 * The DynamoDB engine the integration tests run on: the embedded dynalite (`npm test`), or AWS's
 * DynamoDB Local when TEST_DYNAMODB=dynamodb-local (`npm run test:dynamodb-local`).
 */
export type TestEngine = 'dynalite' | 'dynamodb-local';

/** The engine of this test run, from TEST_DYNAMODB (default dynalite). */
export function testEngine(): TestEngine {
  const value = process.env.TEST_DYNAMODB ?? 'dynalite';
  if (value !== 'dynalite' && value !== 'dynamodb-local') {
    throw new Error(`TEST_DYNAMODB must be dynalite or dynamodb-local, got "${value}"`);
  }
  return value;
}

/** A DynamoDB of this run's engine, empty, on a free port. */
export async function startTestDynamo(): Promise<{ endpoint: string; close(): Promise<void> }> {
  return testEngine() === 'dynamodb-local'
    ? startDynamoDbLocal()
    : startEmbeddedDynamo({ port: 0, host: '127.0.0.1' });
}
