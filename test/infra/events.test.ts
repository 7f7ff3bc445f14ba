import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Code, Function as LambdaFunction, Runtime, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BACKGROUND_FUNCTIONS,
  type BackgroundFunctionName,
  DELIVERY_QUEUE_SOURCE,
  SESSION_STREAM_SOURCE,
} from '#lib/definitions/background';
import { FUNCTIONS } from '#lib/definitions/routes';
import type { TableKey } from '#lib/definitions/tables';
import type { Json } from '#test/support/infra';
import {
  allowedDynamoGrants,
  dynamoGrants,
  functionByDescription,
  resources,
  roleStatements,
  synthesize,
  tableLogicalIds,
} from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const NAMES = Object.keys(BACKGROUND_FUNCTIONS) as BackgroundFunctionName[];
/** The event pipeline's functions: every background function but the keyring's rotation. */
const PIPELINE = NAMES.filter((name) => name !== 'keyRotation');

const synth = useSynthesized();
let ids: Record<TableKey, string>;

beforeAll(() => {
  ids = tableLogicalIds(synth.template);
});

const fnOf = (name: BackgroundFunctionName): [string, Json] =>
  functionByDescription(synth.template, BACKGROUND_FUNCTIONS[name].description);
const statementsOf = (name: BackgroundFunctionName): Json[] =>
  roleStatements(synth.template, fnOf(name)[1].Properties.Role['Fn::GetAtt'][0]);
/** Every action of the role but log writes, as `action on resource`. */
const actionsOf = (name: BackgroundFunctionName, prefix: string): string[] =>
  statementsOf(name).flatMap((statement) =>
    [statement.Action]
      .flat()
      .filter((action: string) => action.startsWith(prefix))
      .flatMap((action: string) =>
        [statement.Resource].flat().map((resource: Json) => `${action} on ${JSON.stringify(resource)}`),
      ),
  );
const logicalId = (type: string, pathPart: string): string => {
  const found = Object.entries(resources(synth.template, type)).filter(([id]) => id.includes(pathPart));
  expect(found, `${type} ${pathPart}`).toHaveLength(1);
  return (found[0] as [string, Json])[0];
};

describe('the sessions stream consumer', () => {
  it('reads the sessions stream from its start, bisecting failed batches, reporting failed records, with bounded retries and age', () => {
    const mappings = Object.values(resources(synth.template, 'AWS::Lambda::EventSourceMapping')).filter(
      (m) => m.Properties.EventSourceArn?.['Fn::GetAtt']?.[1] === 'StreamArn',
    );
    expect(mappings).toHaveLength(1);
    const props = (mappings[0] as Json).Properties;
    expect(props.EventSourceArn['Fn::GetAtt'][0]).toBe(ids.sessions);
    expect(props.FunctionName.Ref).toBe(fnOf('sessionStream')[0]);
    expect(props).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: SESSION_STREAM_SOURCE.retryAttempts,
      MaximumRecordAgeInSeconds: SESSION_STREAM_SOURCE.maxRecordAgeHours * 3600,
      BatchSize: SESSION_STREAM_SOURCE.batchSize,
    });
    const failureQueue = logicalId('AWS::SQS::Queue', 'StreamFailures');
    expect(props.DestinationConfig.OnFailure.Destination).toEqual({ 'Fn::GetAtt': [failureQueue, 'Arn'] });
  });

  it('may read the sessions stream only, never ListStreams on every resource', () => {
    expect(
      actionsOf('sessionStream', 'dynamodb:')
        .filter((a) => a.includes('StreamArn'))
        .sort(),
    ).toEqual(
      ['DescribeStream', 'GetRecords', 'GetShardIterator', 'ListStreams'].map(
        (action) => `dynamodb:${action} on ${JSON.stringify({ 'Fn::GetAtt': [ids.sessions, 'StreamArn'] })}`,
      ),
    );
    for (const name of NAMES) expect(actionsOf(name, 'dynamodb:').join()).not.toContain('"*"');
  });

  it('is granted every stream action CDK’s own DynamoEventSource grants, ListStreams scoped to the stream', () => {
    // A throwaway stack wired the stock way, to read what a stream trigger takes from its policy (CDK's
    // template validation, two seconds, has nothing to say about it).
    const stack = new Stack(new App({ builtinCloudFormationValidation: false }), 'Stock');
    const table = new Table(stack, 'T', {
      partitionKey: { name: 'id', type: AttributeType.STRING },
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    const fn = new LambdaFunction(stack, 'F', {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({})'),
    });
    fn.addEventSource(new DynamoEventSource(table, { startingPosition: StartingPosition.TRIM_HORIZON }));
    const stock = Template.fromStack(stack).toJSON();
    const stockActions = Object.values(stock.Resources as Record<string, Json>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .flatMap((statement: Json) => [statement.Action].flat())
      .filter((action: string) => action.startsWith('dynamodb:'));
    expect(stockActions.length).toBeGreaterThan(0);
    const ours = actionsOf('sessionStream', 'dynamodb:')
      .filter((a) => a.includes('StreamArn'))
      .map((a) => a.split(' on ')[0]);
    expect([...new Set(stockActions)].filter((action) => !ours.includes(action))).toEqual([]);
  });
});

describe('background function grants', () => {
  it.each(NAMES)('grants %s exactly the table actions its definition lists', (name) => {
    const tableGrants = dynamoGrants(
      statementsOf(name).filter((s) => !JSON.stringify(s.Resource).includes('StreamArn')),
      ids,
    );
    expect(tableGrants).toEqual(allowedDynamoGrants(BACKGROUND_FUNCTIONS[name]));
  });

  it.each(NAMES)('lets %s put events on the stack bus only if its definition says so', (name) => {
    const bus = logicalId('AWS::Events::EventBus', 'Bus');
    const expected = (BACKGROUND_FUNCTIONS[name] as { putsEvents?: boolean }).putsEvents
      ? [`events:PutEvents on ${JSON.stringify({ 'Fn::GetAtt': [bus, 'Arn'] })}`]
      : [];
    expect(actionsOf(name, 'events:')).toEqual(expected);
  });

  it.each(NAMES)(
    'lets %s send only to the delivery queue, and receive only from its own trigger queue',
    (name) => {
      const deliveries = JSON.stringify({
        'Fn::GetAtt': [logicalId('AWS::SQS::Queue', 'EventsDeliveries'), 'Arn'],
      });
      const failures = JSON.stringify({
        'Fn::GetAtt': [logicalId('AWS::SQS::Queue', 'StreamFailures'), 'Arn'],
      });
      const sqs = actionsOf(name, 'sqs:');
      const sends = sqs.filter((a) => a.startsWith('sqs:SendMessage')).map((a) => a.split(' on ')[1]);
      const others = sqs.filter((a) => !a.startsWith('sqs:SendMessage') && !a.startsWith('sqs:GetQueue'));
      const definition = BACKGROUND_FUNCTIONS[name];
      // The stream consumer's on-failure destination is sent to by Lambda with the function's role.
      const expectedSends = [
        ...('sendsTo' in definition && definition.sendsTo.length ? [deliveries] : []),
        ...(definition.trigger.kind === 'sessionStream' ? [failures] : []),
      ];
      expect([...new Set(sends)].sort()).toEqual(expectedSends.sort());
      if (definition.trigger.kind === 'queue') {
        expect(others.length).toBeGreaterThan(0);
        for (const action of others) expect(action).toMatch(new RegExp(`on ${escapeRegExp(deliveries)}$`));
      } else expect(others).toEqual([]);
    },
  );

  it('lets the delivery worker use KMS only for webhook secrets and to open the keyring that signs logout tokens', () => {
    const arnOf = (pathPart: string) =>
      JSON.stringify({ 'Fn::GetAtt': [logicalId('AWS::KMS::Key', pathPart), 'Arn'] });
    expect(actionsOf('webhookDelivery', 'kms:').sort()).toEqual(
      [
        `kms:GenerateMac on ${arnOf('WebhooksSecretKey')}`,
        // The keyring's sealing key, decrypted once per execution environment; it signs in memory.
        `kms:Decrypt on ${arnOf('IdTokenKeysKeyring')}`,
      ].sort(),
    );
    // The rotation only encrypts (when it makes the keyring); it never decrypts.
    expect(actionsOf('keyRotation', 'kms:')).toEqual([`kms:Encrypt on ${arnOf('IdTokenKeysKeyring')}`]);
    // The stream consumer and the sweep only queue logouts: no key, no token.
    expect(actionsOf('sessionStream', 'kms:')).toEqual([]);
    expect(actionsOf('expirySweep', 'kms:')).toEqual([]);
  });

  it('lets only the delivery worker scan, and only the sessions table: the logouts of an operator’s cut-off no index holds', () => {
    const sessions = JSON.stringify({ 'Fn::GetAtt': [ids.sessions, 'Arn'] });
    const scans = NAMES.flatMap((name) => actionsOf(name, 'dynamodb:Scan').map((a) => `${name}: ${a}`));
    expect(scans).toEqual([`webhookDelivery: dynamodb:Scan on ${sessions}`]);
    // A revoke-all's logouts read the three scope indexes that hold a cut-off's sessions; a handed-off
    // event reads its owner's endpoints from the webhooks table itself; nothing else.
    const queried = actionsOf('webhookDelivery', 'dynamodb:Query').map((a) => a.split(' on ')[1]);
    const webhooks = JSON.stringify({ 'Fn::GetAtt': [ids.webhooks, 'Arn'] });
    expect(queried).toHaveLength(4);
    expect(queried.filter((resource) => resource === webhooks)).toHaveLength(1);
    for (const index of queried.filter((resource) => resource !== webhooks))
      expect(index).toMatch(/(orgUser|creatorUser|board)-index/);
  });

  it('keeps webhook endpoints off the shared pipeline: neither the consumer nor the sweep may read them, nor is told their table', () => {
    const webhooks = JSON.stringify({ 'Fn::GetAtt': [ids.webhooks, 'Arn'] });
    for (const name of ['sessionStream', 'expirySweep'] as const) {
      expect(
        actionsOf(name, 'dynamodb:').filter((a) => a.includes(webhooks)),
        name,
      ).toEqual([]);
      expect(fnOf(name)[1].Properties.Environment.Variables.WEBHOOKS_TABLE, name).toBeUndefined();
    }
    expect(
      actionsOf('webhookDelivery', 'dynamodb:')
        .filter((a) => a.includes(webhooks))
        .sort(),
    ).toEqual(
      // The worker reads an owner's endpoints and one endpoint, and counts deliveries per host.
      [
        `dynamodb:GetItem on ${webhooks}`,
        `dynamodb:Query on ${webhooks}`,
        `dynamodb:UpdateItem on ${webhooks}`,
      ].sort(),
    );
  });

  it('lets the consumer, the sweep and the delivery worker read boards, item by item and nothing else', () => {
    const boards = JSON.stringify({ 'Fn::GetAtt': [ids.boards, 'Arn'] });
    for (const name of PIPELINE) {
      expect(
        actionsOf(name, 'dynamodb:').filter((a) => a.endsWith(`on ${boards}`)),
        name,
      ).toEqual([`dynamodb:GetItem on ${boards}`]);
    }
  });
});

describe('webhook delivery queue', () => {
  it('feeds webhook delivery with per-message failures, and moves a message failing five times to the dead-letter queue', () => {
    const queueId = logicalId('AWS::SQS::Queue', 'EventsDeliveries');
    const mapping = Object.values(resources(synth.template, 'AWS::Lambda::EventSourceMapping')).find(
      (m) => m.Properties.EventSourceArn?.['Fn::GetAtt']?.[0] === queueId,
    ) as Json;
    expect(mapping.Properties.FunctionName.Ref).toBe(fnOf('webhookDelivery')[0]);
    expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping.Properties.BatchSize).toBe(DELIVERY_QUEUE_SOURCE.batchSize);
    const queue = resources(synth.template, 'AWS::SQS::Queue')[queueId] as Json;
    expect(queue.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [logicalId('AWS::SQS::Queue', 'DeliveryDeadLetters'), 'Arn'] },
      maxReceiveCount: DELIVERY_QUEUE_SOURCE.maxReceiveCount,
    });
    // Hidden long enough for the slowest invocation, so a message is not handled twice at once.
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
      BACKGROUND_FUNCTIONS.webhookDelivery.timeoutSeconds * 6,
    );
    // SQS's default message size, which METADATA_MAX_BYTES_CEILING is computed against.
    expect(queue.Properties.MaximumMessageSize ?? 256 * 1024).toBe(DELIVERY_QUEUE_SOURCE.maxMessageBytes);
  });

  it('encrypts every queue and refuses plain-HTTP access', () => {
    const queues = resources(synth.template, 'AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(3);
    for (const queue of Object.values(queues)) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    const policies = Object.values(resources(synth.template, 'AWS::SQS::QueuePolicy'));
    const denied = policies.flatMap((p) =>
      p.Properties.PolicyDocument.Statement.filter(
        (s: Json) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false',
      ),
    );
    expect(denied.length).toBeGreaterThanOrEqual(3);
  });

  it('gives the delivery function the environment it reads: the queue URL, the webhook secret key, and what signs logouts', () => {
    const env = fnOf('webhookDelivery')[1].Properties.Environment.Variables;
    expect(env.WEBHOOK_DELIVERY_QUEUE_URL).toEqual({ Ref: logicalId('AWS::SQS::Queue', 'EventsDeliveries') });
    expect(env.WEBHOOK_SECRET_KEY).toBeDefined();
    expect(env.EVENT_BUS_NAME).toBeUndefined();
    // The keyring's KMS key by ARN, as the embed page gets it, and the keyring's table.
    expect(env.ID_TOKEN_KEYRING_KEY).toEqual({
      'Fn::GetAtt': [logicalId('AWS::KMS::Key', 'IdTokenKeysKeyring'), 'Arn'],
    });
    expect(env.SIGNING_KEYS_TABLE).toBeDefined();
  });

  it('gives the background functions the ID token issuer: the API stage URL the embed page derives, without a domain', () => {
    const stageUrl = synth.template.toJSON().Outputs.ApiUrl.Value;
    for (const name of PIPELINE) {
      expect(fnOf(name)[1].Properties.Environment.Variables.PUBLIC_BASE_URL, name).toEqual(stageUrl);
    }
  });

  it('gives them publicBaseUrl and boardAppUrl when the stage sets them, as the embed page gets them', () => {
    const configured = synthesize({
      context: { publicBaseUrl: 'https://boards.example.com', boardAppUrl: 'https://app.example.com/in' },
    });
    try {
      const [, embed] = functionByDescription(configured.template, FUNCTIONS.embedPage.description);
      const embedEnv = embed.Properties.Environment.Variables;
      for (const name of PIPELINE) {
        const [, fn] = functionByDescription(configured.template, BACKGROUND_FUNCTIONS[name].description);
        const env = fn.Properties.Environment.Variables;
        expect(env.PUBLIC_BASE_URL, name).toBe(embedEnv.PUBLIC_BASE_URL);
        expect(env.BOARD_APP_URL, name).toBe(embedEnv.BOARD_APP_URL);
        expect(env.BOARD_APP_URL).toBe('https://app.example.com/in');
      }
    } finally {
      configured.dispose();
    }
  });
});

describe('expiry sweep', () => {
  it('runs the sweep every five minutes on an EventBridge schedule', () => {
    const rules = Object.values(resources(synth.template, 'AWS::Events::Rule'))
      .map((rule) => (rule as Json).Properties)
      .filter((rule) => rule.Targets[0].Arn['Fn::GetAtt'][0] === fnOf('expirySweep')[0]);
    expect(rules).toHaveLength(1);
    const rule = rules[0] as Json;
    expect(rule.ScheduleExpression).toBe('rate(5 minutes)');
    expect(rule.Targets).toHaveLength(1);
    expect(rule.Targets[0].Arn).toEqual({ 'Fn::GetAtt': [fnOf('expirySweep')[0], 'Arn'] });
  });

  it('gives the sweep and the consumer the bus name and the delivery queue URL', () => {
    const bus = logicalId('AWS::Events::EventBus', 'Bus');
    for (const name of ['sessionStream', 'expirySweep'] as const) {
      const env = fnOf(name)[1].Properties.Environment.Variables;
      expect(env.EVENT_BUS_NAME).toEqual({ Ref: bus });
      expect(env.WEBHOOK_DELIVERY_QUEUE_URL).toEqual({
        Ref: logicalId('AWS::SQS::Queue', 'EventsDeliveries'),
      });
    }
  });
});

describe('pipeline alarms', () => {
  it.each([
    ['DeliveryDeadLetters', 'the webhook dead-letter queue'],
    ['StreamFailures', 'the stream failure queue'],
  ])('alarms on any message in %s (%s)', (queuePart) => {
    const queueId = logicalId('AWS::SQS::Queue', queuePart);
    const alarms = Object.values(resources(synth.template, 'AWS::CloudWatch::Alarm')).filter(
      (a) =>
        a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        JSON.stringify(a.Properties.Dimensions).includes(queueId),
    );
    expect(alarms).toHaveLength(1);
    expect((alarms[0] as Json).Properties).toMatchObject({ Threshold: 1, Namespace: 'AWS/SQS' });
  });

  it('writes plain ASCII function descriptions (cfn-lint refuses others)', () => {
    for (const name of NAMES) expect(BACKGROUND_FUNCTIONS[name].description).toMatch(/^[\x20-\x7e]+$/);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
