import { Duration, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  type BackgroundFunctionDefinition,
  DELIVERY_QUEUE_SOURCE,
  type QueueKey,
  SESSION_STREAM_SOURCE,
} from '#lib/definitions/background';
import type { ServiceFunction } from './service-function';

/** How long a delivery message stays hidden while one invocation handles it: 6 x the function timeout. */
const VISIBILITY_FACTOR = 6;
/** SQS keeps a message at most 14 days: what a failed record or delivery waits in its queue for a look. */
const RETENTION = Duration.days(14);

/**
 * The event pipeline's resources: the stack's event bus, the webhook delivery queue with its dead-letter
 * queue, and the queue where the stream consumer's records land once their retries are spent. `connect`
 * wires the background functions to their triggers and grants them exactly their sends.
 */
export class EventPipeline extends Construct {
  readonly bus: EventBus;
  readonly queues: Record<QueueKey, Queue>;
  readonly deliveryDeadLetters: Queue;
  readonly streamFailures: Queue;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', {
      description: 'Session events of the embed session service (source embed-sessions)',
    });
    this.deliveryDeadLetters = queue(this, 'DeliveryDeadLetters');
    this.queues = {
      webhookDeliveries: queue(this, 'Deliveries', {
        // Long enough for the slowest invocation (60 s) to finish before the message is offered again.
        visibilityTimeout: Duration.seconds(60 * VISIBILITY_FACTOR),
        deadLetterQueue: {
          queue: this.deliveryDeadLetters,
          maxReceiveCount: DELIVERY_QUEUE_SOURCE.maxReceiveCount,
        },
      }),
    };
    this.streamFailures = queue(this, 'StreamFailures');
    Validations.of(this.streamFailures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is the on-failure destination of the sessions stream mapping: it already is where ' +
        'records end after their retries, and holds descriptions of them that an operator replays.',
    });
  }

  /** Triggers and grants of one background function, from its definition. */
  connect(fn: ServiceFunction, definition: BackgroundFunctionDefinition, sessions: Table): void {
    const { trigger } = definition;
    if (trigger.kind === 'sessionStream') {
      const streamArn = sessions.tableStreamArn;
      if (!streamArn)
        throw new Error('The sessions table has no stream: set stream in lib/definitions/tables.ts');
      // What CDK's own DynamoEventSource grants (and Lambda's documentation lists), on this stream only:
      // DynamoEventSource puts ListStreams on "*", which lists every stream of the account; scoped to the
      // stream's ARN, as AWS's own example policy does, it names nothing beyond it.
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: [
            'dynamodb:DescribeStream',
            'dynamodb:GetRecords',
            'dynamodb:GetShardIterator',
            'dynamodb:ListStreams',
          ],
          resources: [streamArn],
        }),
      );
      fn.function.addEventSourceMapping('SessionsStream', {
        eventSourceArn: streamArn,
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: SESSION_STREAM_SOURCE.batchSize,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: SESSION_STREAM_SOURCE.retryAttempts,
        maxRecordAge: Duration.hours(SESSION_STREAM_SOURCE.maxRecordAgeHours),
        onFailure: new SqsDlq(this.streamFailures),
      });
    } else if (trigger.kind === 'queue') {
      fn.function.addEventSource(
        new SqsEventSource(this.queues[trigger.queue], {
          batchSize: DELIVERY_QUEUE_SOURCE.batchSize,
          reportBatchItemFailures: true,
        }),
      );
    } else {
      new Rule(this, `${fn.node.id}Schedule`, {
        description: `Runs ${definition.entry} every ${trigger.everyMinutes} minutes`,
        schedule: Schedule.rate(Duration.minutes(trigger.everyMinutes)),
        targets: [new LambdaFunction(fn.function, { retryAttempts: 2 })],
      });
    }
    if (definition.putsEvents) {
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['events:PutEvents'], resources: [this.bus.eventBusArn] }),
      );
    }
    for (const key of definition.sendsTo ?? []) {
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queues[key].queueArn] }),
      );
    }
  }
}

function queue(scope: Construct, id: string, props: ConstructorParameters<typeof Queue>[2] = {}): Queue {
  return new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: RETENTION,
    ...props,
  });
}
