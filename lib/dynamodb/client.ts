import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoConfig } from '../config';

/**
 * The document client every adapter receives. Short timeouts and the SDK's standard retries: a slow
 * DynamoDB becomes a 503 within the function timeout instead of a gateway timeout.
 */
export function createDocumentClient(config: DynamoConfig): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: config.region,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000 },
    ...(config.endpoint
      ? {
          endpoint: config.endpoint,
          // The embedded DynamoDB ignores credentials; real AWS uses the default provider chain.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
