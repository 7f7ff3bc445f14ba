import { Duration } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { ServiceDefinitions } from '#infra/definitions';
import type { DynamoAction, FunctionDefinition } from '#lib/definitions/routes';
import type { TableKey } from '#lib/definitions/tables';
import { constructId } from './data';
import type { EventPipeline } from './events';
import type { ServiceFunctions } from './functions';

const PERIOD = Duration.minutes(5);
/**
 * Namespace of the metrics the stack derives from its functions' logs, one per stage: metric names are
 * account-wide, so stages sharing an account must not count (and page on) each other's errors.
 */
export function metricNamespace(stageName: string): string {
  return `EmbedSessionService/${stageName}`;
}

/** The CloudWatch operation of each DynamoDB action the functions may perform (compile-time complete). */
const OPERATIONS: Record<DynamoAction, Operation> = {
  GetItem: Operation.GET_ITEM,
  BatchGetItem: Operation.BATCH_GET_ITEM,
  PutItem: Operation.PUT_ITEM,
  UpdateItem: Operation.UPDATE_ITEM,
  DeleteItem: Operation.DELETE_ITEM,
  Query: Operation.QUERY,
  Scan: Operation.SCAN,
};

export interface MonitoringProps {
  definitions: ServiceDefinitions;
  stage: Stage;
  /** The stage's name as configured (the Stage construct only knows it as a token). */
  stageName: string;
  functions: ServiceFunctions;
  tables: Record<TableKey, ITable>;
  alarmEmail: string | undefined;
  /** The functions no route serves (the event pipeline's): watched like the API's. */
  background?: { definitions: Readonly<Record<string, FunctionDefinition>>; functions: ServiceFunctions };
  /** The pipeline's queues: a message in the dead-letter or stream failure queue pages. */
  events?: EventPipeline;
}

/**
 * Alarms that page on any occurrence: on a low-traffic service a single 5XX, function error or throttle
 * is worth a look, and a count threshold would hide it.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: 'Embed session service alarms',
      enforceSSL: true,
    });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    this.alarm(
      'Api5xx',
      props.stage.metricServerError({ period: PERIOD, statistic: 'Sum' }),
      'The API returned at least one 5XX response',
    );

    const allFunctions = { ...props.functions.functions, ...props.background?.functions.functions };
    for (const [name, serviceFunction] of Object.entries(allFunctions)) {
      const fn = serviceFunction.function;
      // The authorizer refuses a bad key by throwing `Unauthorized`, which Lambda counts as an error: an
      // alarm on its Errors would page on every mistyped key. Its real failures are logged at error level.
      if (name !== props.definitions.authorizer) {
        this.alarm(
          `${constructId(name)}Errors`,
          fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
          `The ${name} function failed at least once`,
        );
      }
      this.alarm(
        `${constructId(name)}LoggedErrors`,
        new MetricFilter(this, `${constructId(name)}ErrorLines`, {
          logGroup: serviceFunction.logGroup,
          filterPattern: FilterPattern.stringValue('$.level', '=', 'error'),
          metricNamespace: metricNamespace(props.stageName),
          metricName: `${constructId(name)}LoggedErrors`,
          metricValue: '1',
        }).metric({ period: PERIOD, statistic: 'Sum' }),
        `The ${name} function logged at least one error (an unexpected failure; for the authorizer, also a failed key lookup)`,
      );
      this.alarm(
        `${constructId(name)}Throttles`,
        fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        `The ${name} function was throttled at least once`,
      );
    }

    if (props.events) {
      this.alarm(
        'WebhookDeadLetters',
        props.events.deliveryDeadLetters.metricApproximateNumberOfMessagesVisible({
          period: PERIOD,
          statistic: 'Maximum',
        }),
        'A webhook delivery message failed to be handled five times and waits in the dead-letter queue',
      );
      this.alarm(
        'StreamFailures',
        props.events.streamFailures.metricApproximateNumberOfMessagesVisible({
          period: PERIOD,
          statistic: 'Maximum',
        }),
        'Sessions stream records ran out of retries: their events were not recorded or published',
      );
    }

    const definitions = [
      ...Object.values(props.definitions.functions),
      ...Object.values(props.background?.definitions ?? {}),
    ];
    for (const [key, table] of Object.entries(props.tables) as [TableKey, ITable][]) {
      const operations = tableOperations(definitions, key);
      this.alarm(
        `${constructId(key)}Throttles`,
        throttledRequests(table, operations),
        `Requests to the ${key} table were throttled`,
      );
    }
  }

  private alarm(id: string, metric: IMetric, description: string): void {
    const alarm = new Alarm(this, id, {
      metric,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No traffic is not an incident.
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
  }
}

/**
 * Throttled requests summed over operations. DynamoDB publishes the metric only for an operation that was
 * throttled, and a plain `a + b` has no value where either is missing, so each term is filled with 0.
 */
function throttledRequests(table: ITable, operations: Operation[]): IMetric {
  const metrics: Record<string, Metric> = {};
  for (const operation of operations) {
    metrics[operation.toLowerCase()] = new Metric({
      namespace: 'AWS/DynamoDB',
      metricName: 'ThrottledRequests',
      dimensionsMap: { TableName: table.tableName, Operation: operation },
      period: PERIOD,
      statistic: 'Sum',
    });
  }
  return new MathExpression({
    expression: Object.keys(metrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics: metrics,
    label: 'Throttled requests',
    period: PERIOD,
  });
}

/**
 * The operations the functions perform on a table, from their access lists. A table no function
 * touches (only the admin CLI) is watched for every operation the service knows.
 */
function tableOperations(definitions: readonly FunctionDefinition[], key: TableKey): Operation[] {
  const actions = new Set<DynamoAction>();
  for (const definition of definitions) {
    for (const action of definition.access[key] ?? []) actions.add(action);
  }
  const used = actions.size > 0 ? [...actions] : (Object.keys(OPERATIONS) as DynamoAction[]);
  return used.map((action) => OPERATIONS[action]);
}
