import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { AWS_CALL_LIMITS, type AwsCallLimits } from '#lib/platform/aws-clients';
import { ensureTables } from '#local/dynamodb';
import { type FaultProxy, startFaultProxy } from './fault-proxy';
import { usePerFile } from './per-file';
import { startTestDynamo } from './test-dynamo';

/** The service's tables on this run's engine, with a fault proxy in front, for adapter-level fault tests. */
export interface TablesBehindProxy {
  proxy: FaultProxy;
  /** Through the proxy: what the code under test uses. */
  db: DynamoDBDocumentClient;
  /** Straight to DynamoDB: what was really written. */
  truth: DynamoDBDocumentClient;
}

/**
 * The tables (`LOCAL_TABLE_NAMES`) behind a fault proxy for the tests of a file: started before them,
 * closed after them, and the proxy's faults cleared before each test. The function returned hands them
 * to the tests (and to the file's `beforeAll`, which builds its repositories on `db`). `db` calls with
 * `limits`: a file that makes answers late passes the short ones (test/support/short-aws-limits.ts).
 */
export function useTablesBehindProxy(limits: AwsCallLimits = AWS_CALL_LIMITS): () => TablesBehindProxy {
  const tables = usePerFile(
    'the tables behind the fault proxy',
    async () => {
      const dynamo = await startTestDynamo();
      await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
      const proxy = await startFaultProxy(dynamo.endpoint);
      return {
        proxy,
        db: createDocumentClient({ endpoint: proxy.endpoint, region: 'local' }, limits),
        truth: createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' }),
        close: async () => {
          await proxy.close();
          await dynamo.close();
        },
      };
    },
    async (started) => {
      started.db.destroy();
      started.truth.destroy();
      await started.close();
    },
  );
  beforeEach(() => tables().proxy.clear());
  return tables;
}
