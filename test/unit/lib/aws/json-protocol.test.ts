import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsJsonError, awsJsonCall, EVENTBRIDGE, SQS } from '#lib/aws/json-protocol';

const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
let answers: Array<[number, unknown]> = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    const [status, body] = answers.shift() ?? [200, {}];
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
  });
});
let endpoint: string;
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => server.close());

describe('signed AWS JSON protocol calls', () => {
  it('sends an EventBridge operation as AWSEvents JSON 1.1, signed for events in the region', async () => {
    received.length = 0;
    answers = [[200, { FailedEntryCount: 0, Entries: [{ EventId: 'e1' }] }]];
    const call = awsJsonCall(EVENTBRIDGE, { region: 'eu-west-1', endpoint, credentials });
    expect(await call('PutEvents', { Entries: [] })).toEqual({
      FailedEntryCount: 0,
      Entries: [{ EventId: 'e1' }],
    });
    const [request] = received;
    expect(request?.headers['x-amz-target']).toBe('AWSEvents.PutEvents');
    expect(request?.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/events\/aws4_request, SignedHeaders=[^,]*x-amz-target/,
    );
    expect(JSON.parse(request?.body ?? '')).toEqual({ Entries: [] });
  });

  it('sends an SQS operation as AmazonSQS JSON 1.0, signed for sqs', async () => {
    received.length = 0;
    answers = [[200, { MessageId: 'm1' }]];
    const call = awsJsonCall(SQS, { region: 'eu-west-1', endpoint, credentials });
    await call('SendMessage', { QueueUrl: 'q', MessageBody: '{}', DelaySeconds: 5 });
    expect(received[0]?.headers['x-amz-target']).toBe('AmazonSQS.SendMessage');
    expect(received[0]?.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(received[0]?.headers.authorization).toContain('/eu-west-1/sqs/aws4_request');
  });

  it('answers a refusal as an error with its code, without retrying it', async () => {
    received.length = 0;
    answers = [[400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'no such queue' }]];
    const call = awsJsonCall(SQS, { region: 'eu-west-1', endpoint, credentials });
    const failed = call('SendMessage', {});
    await expect(failed).rejects.toBeInstanceOf(AwsJsonError);
    await expect(failed).rejects.toMatchObject({ code: 'QueueDoesNotExist', status: 400 });
    expect(received).toHaveLength(1);
  });

  it('retries a throttled or failed call, up to three attempts', async () => {
    received.length = 0;
    answers = [
      [400, { __type: 'ThrottlingException', message: 'slow down' }],
      [500, { __type: 'InternalFailure' }],
      [200, { MessageId: 'm2' }],
    ];
    const call = awsJsonCall(SQS, { region: 'eu-west-1', endpoint, credentials });
    expect(await call('SendMessage', {})).toEqual({ MessageId: 'm2' });
    expect(received).toHaveLength(3);
  });
});

describe('the KMS client over the JSON protocol', () => {
  it('answers KMS failing after its attempts as the outage it is (503), a refusal as the error it is', async () => {
    const { KmsJsonClient } = await import('#lib/signing/kms-json');
    const { DependencyUnavailableError } = await import('#lib/domain/errors');
    const kms = new KmsJsonClient({ region: 'eu-west-1', endpoint, credentials });
    answers = [
      [500, { __type: 'KMSInternalException' }],
      [500, { __type: 'KMSInternalException' }],
      [500, { __type: 'KMSInternalException' }],
    ];
    await expect(kms.getPublicKey({ KeyId: 'k' })).rejects.toBeInstanceOf(DependencyUnavailableError);
    answers = [[400, { __type: 'NotFoundException', message: 'no such key' }]];
    const refused = kms.getPublicKey({ KeyId: 'k' });
    await expect(refused).rejects.toBeInstanceOf(AwsJsonError);
    await expect(refused).rejects.not.toBeInstanceOf(DependencyUnavailableError);
  });
});
