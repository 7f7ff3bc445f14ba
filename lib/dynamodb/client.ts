import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoConfig } from '#lib/platform/config';

/**
 * The document client every adapter receives. Short timeouts and the SDK's standard retries (3 attempts):
 * DynamoDB answers these small requests in milliseconds, so a call that hangs is retried, and a DynamoDB
 * that stays slow becomes a 503 well within the function timeout (FUNCTION_TIMEOUT_SECONDS).
 */
export function createDocumentClient(config: DynamoConfig): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: config.region,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 500, requestTimeout: 1_000 },
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
