import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';

/**
 * A mocked document client for adapter tests: every `DynamoDBDocumentClient` answers from `ddb`, reset
 * before each test and restored after the file. `db` is a client built exactly as the functions build
 * theirs (lib/adapters/dynamodb/client.ts), to hand to the adapter under test.
 */
export function mockedDocumentClient() {
  const ddb = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    ddb.reset();
  });
  afterAll(() => {
    ddb.restore();
  });
  return { ddb, db: createDocumentClient({ region: 'us-east-1', endpoint: undefined }) };
}
