import { Duration } from 'aws-cdk-lib';
import {
  Dashboard,
  GraphWidget,
  type IMetric,
  type IWidget,
  Metric,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { RouteSpec } from '#infra/definitions';
import type { EventPipeline } from './events';
import type { ServiceFunctions } from './functions';

const PERIOD = Duration.minutes(1);

export interface ServiceDashboardProps {
  stageName: string;
  /** The REST API's name, the `ApiName` of its metrics. */
  apiName: string;
  routes: readonly RouteSpec[];
  functions: readonly ServiceFunctions[];
  events: EventPipeline;
  /** The stream consumer: its iterator age is how far events lag the sessions table. */
  streamConsumer: ServiceFunctions['functions'][string];
}

/**
 * The service's golden signals on one page: per route its requests, 4xx, 5xx and p99 latency (API
 * Gateway's per-method metrics, which the stage enables); every function's throttles; the dead-letter and
 * stream-failure queues' depth; and how far delivery lags: the oldest message waiting in the delivery
 * queue, and the stream consumer's iterator age.
 */
export class ServiceDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ServiceDashboardProps) {
    super(scope, id);
    const api = (metricName: string, route: RouteSpec, statistic: string, label: string): IMetric =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: {
          ApiName: props.apiName,
          Stage: props.stageName,
          Method: route.method,
          Resource: route.path,
        },
        statistic,
        period: PERIOD,
        label,
      });
    const routeWidgets: IWidget[] = props.routes.map(
      (route) =>
        new GraphWidget({
          title: `${route.method} ${route.path}`,
          width: 12,
          left: [
            api('Count', route, 'Sum', 'requests'),
            api('4XXError', route, 'Sum', '4xx'),
            api('5XXError', route, 'Sum', '5xx'),
          ],
          right: [api('Latency', route, 'p99', 'p99 latency (ms)')],
        }),
    );
    const everyFunction = props.functions.flatMap((group) => Object.entries(group.functions));
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `embed-session-${props.stageName}`,
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new TextWidget({
            markdown: `# Embed session service (${props.stageName})\nPer route: requests, 4xx, 5xx (left), p99 latency (right). Then throttles, dead letters and delivery lag.`,
            width: 24,
            height: 2,
          }),
        ],
        routeWidgets,
        [
          new GraphWidget({
            title: 'Function throttles',
            width: 12,
            left: everyFunction.map(([name, fn]) =>
              fn.function.metricThrottles({ period: PERIOD, statistic: 'Sum', label: name }),
            ),
          }),
          new GraphWidget({
            title: 'Dead letters and stream failures (messages waiting)',
            width: 12,
            left: [
              props.events.deliveryDeadLetters.metricApproximateNumberOfMessagesVisible({
                period: PERIOD,
                statistic: 'Maximum',
                label: 'delivery dead letters',
              }),
              props.events.streamFailures.metricApproximateNumberOfMessagesVisible({
                period: PERIOD,
                statistic: 'Maximum',
                label: 'stream failures',
              }),
            ],
          }),
        ],
        [
          new GraphWidget({
            title: 'Delivery lag: oldest waiting message (s, left), stream iterator age (ms, right)',
            width: 24,
            left: Object.entries(props.events.queues).map(([key, queue]) =>
              queue.metricApproximateAgeOfOldestMessage({
                period: PERIOD,
                statistic: 'Maximum',
                label: `oldest message of ${key}`,
              }),
            ),
            right: [
              new Metric({
                namespace: 'AWS/Lambda',
                metricName: 'IteratorAge',
                dimensionsMap: { FunctionName: props.streamConsumer.function.functionName },
                statistic: 'Maximum',
                period: PERIOD,
                label: 'sessions stream iterator age (ms)',
              }),
            ],
          }),
        ],
      ],
    });
  }
}
