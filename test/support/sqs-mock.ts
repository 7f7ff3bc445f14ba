import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';

/** What a fake delivery queue does with one call: its operation and input, as SQS receives them. */
export type SqsAnswer = (
  operation: 'SendMessage' | 'SendMessageBatch',
  input: Record<string, unknown>,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/**
 * An SQS client (aws-sdk-client-mock) whose SendMessage and SendMessageBatch calls `answer` answers: the
 * two calls the delivery queue's scheduler makes. Any other command fails.
 */
export function sqsClientAnswering(answer: SqsAnswer): SQSClient {
  const client = new SQSClient({ region: 'us-east-1' });
  mockClient(client)
    .onAnyCommand()
    .rejects(new Error('not a call the delivery queue makes'))
    .on(SendMessageCommand)
    .callsFake((input: Record<string, unknown>) => answer('SendMessage', input))
    .on(SendMessageBatchCommand)
    .callsFake((input: Record<string, unknown>) => answer('SendMessageBatch', input));
  return client;
}
