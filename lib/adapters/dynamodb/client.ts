import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type AwsCallLimits, awsClientSettings, withCallPolicy } from '#lib/platform/aws-clients';
import type { DynamoConfig } from '#lib/platform/config';

/**
 * The document client every adapter receives, with the timeouts and retries of every AWS call
 * (lib/platform/aws-clients.ts). `limits` only for tests.
 */
export function createDocumentClient(config: DynamoConfig, limits?: AwsCallLimits): DynamoDBDocumentClient {
  const client = withCallPolicy(new DynamoDBClient(awsClientSettings(config, limits)), limits);
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
