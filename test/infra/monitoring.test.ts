import { beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_FUNCTIONS } from '#lib/definitions/background';
import { AUTHORIZER_FUNCTION, FUNCTIONS, ROUTES } from '#lib/definitions/routes';
import { TABLE_KEYS, type TableKey } from '#lib/definitions/tables';
import type { Json, Synthesized } from '#test/support/infra';
import { functionByDescription, resources, synthesize, tableLogicalIds } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const NAMES = Object.keys(FUNCTIONS) as (keyof typeof FUNCTIONS)[];
const BACKGROUND_NAMES = Object.keys(BACKGROUND_FUNCTIONS);
/** The pipeline's queues that page: the delivery dead-letter queue and the stream's on-failure queue. */
const QUEUE_ALARMS = 2;

const synth = useSynthesized();
let alarms: Json[];
let topicId: string;

beforeAll(() => {
  alarms = Object.values(resources(synth.template, 'AWS::CloudWatch::Alarm'));
  [topicId] = Object.keys(resources(synth.template, 'AWS::SNS::Topic')) as [string];
});

const withMetric = (namespace: string, metricName: string): Json[] =>
  alarms.filter((a) => a.Properties.Namespace === namespace && a.Properties.MetricName === metricName);

describe('alarms', () => {
  it('alarms on any API 5XX response of the stage', () => {
    const [alarm, ...others] = withMetric('AWS/ApiGateway', '5XXError');
    expect(others).toEqual([]);
    expect(alarm.Properties).toMatchObject({
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const dimensions = alarm.Properties.Dimensions.map((d: Json) => d.Name).sort();
    expect(dimensions).toEqual(['ApiName', 'Stage']);
  });

  const lambdaAlarms = (name: (typeof NAMES)[number], metricName: string) => {
    const [functionId] = functionByDescription(synth.template, FUNCTIONS[name].description);
    return withMetric('AWS/Lambda', metricName).filter(
      (a) => a.Properties.Dimensions[0].Value.Ref === functionId,
    );
  };

  it.each(NAMES.flatMap((name) => [[name, 'Throttles'] as const]))('alarms on %s %s', (name, metricName) => {
    const matching = lambdaAlarms(name, metricName);
    expect(matching).toHaveLength(1);
    expect(matching[0].Properties).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
  });

  it.each(NAMES.filter((name) => name !== AUTHORIZER_FUNCTION))('alarms on %s Errors', (name) => {
    const matching = lambdaAlarms(name, 'Errors');
    expect(matching).toHaveLength(1);
    expect(matching[0].Properties).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
  });

  it('does not alarm on the authorizer’s Errors, which count every refused key', () => {
    expect(lambdaAlarms(AUTHORIZER_FUNCTION, 'Errors')).toEqual([]);
  });

  it.each(NAMES)('alarms when %s logs a line at error level', (name) => {
    const [functionId] = functionByDescription(synth.template, FUNCTIONS[name].description);
    const logGroupId = synth.template.toJSON().Resources[functionId].Properties.LoggingConfig.LogGroup.Ref;
    const filters = Object.values(resources(synth.template, 'AWS::Logs::MetricFilter')).filter(
      (f) => f.Properties.LogGroupName.Ref === logGroupId,
    );
    expect(filters).toHaveLength(1);
    const filter = filters[0].Properties;
    expect(filter.FilterPattern).toBe('{ $.level = "error" }');
    const [transformation] = filter.MetricTransformations;
    expect(transformation.MetricValue).toBe('1');
    expect(transformation.MetricNamespace).toBe('EmbedSessionService/prod');
    const matching = withMetric(transformation.MetricNamespace, transformation.MetricName);
    expect(matching).toHaveLength(1);
    expect(matching[0].Properties).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
  });

  it.each(TABLE_KEYS)(
    'alarms on throttled requests to the %s table, for the operations the functions use',
    (key) => {
      const tableId = tableLogicalIds(synth.template)[key];
      const matching = alarms.filter((a) =>
        JSON.stringify(a.Properties.Metrics ?? []).includes(`"Ref":"${tableId}"`),
      );
      expect(matching).toHaveLength(1);
      const metrics: Json[] = matching[0].Properties.Metrics.filter((m: Json) => m.MetricStat);
      for (const metric of metrics) expect(metric.MetricStat.Metric.MetricName).toBe('ThrottledRequests');
      const used = new Set(
        [...Object.values(FUNCTIONS), ...Object.values(BACKGROUND_FUNCTIONS)].flatMap((fn) => [
          ...((fn.access as Partial<Record<TableKey, string[]>>)[key] ?? []),
        ]),
      );
      const operations = metrics.map(
        (m) => m.MetricStat.Metric.Dimensions.find((d: Json) => d.Name === 'Operation').Value,
      );
      if (used.size > 0) expect(operations.sort()).toEqual([...used].sort());
      else expect(operations.length).toBeGreaterThan(0);
    },
  );

  it('keeps the logged-error metrics of two stages in one account apart', () => {
    const staging = synthesize({ context: { stageName: 'staging' } });
    try {
      const namespaces = (template: Synthesized['template']) =>
        new Set(
          Object.values(resources(template, 'AWS::Logs::MetricFilter')).map(
            (f) => f.Properties.MetricTransformations[0].MetricNamespace,
          ),
        );
      expect([...namespaces(staging.template)]).toEqual(['EmbedSessionService/staging']);
      expect([...namespaces(synth.template)]).toEqual(['EmbedSessionService/prod']);
    } finally {
      staging.dispose();
    }
  });

  it('counts a throttled operation even when the table’s other operations have no data', () => {
    for (const key of TABLE_KEYS) {
      const tableId = tableLogicalIds(synth.template)[key];
      const [alarm] = alarms.filter((a) =>
        JSON.stringify(a.Properties.Metrics ?? []).includes(`"Ref":"${tableId}"`),
      );
      const ids: string[] = alarm.Properties.Metrics.filter((m: Json) => m.MetricStat).map((m: Json) => m.Id);
      const [expression] = alarm.Properties.Metrics.filter((m: Json) => m.Expression);
      expect(expression.ReturnData).not.toBe(false);
      expect(expression.Expression).toBe(ids.map((id) => `FILL(${id}, 0)`).join(' + '));
    }
  });

  it('has exactly these alarms: API 5XX, per function (background ones too) throttles, logged errors and (but the authorizer) errors, the two failure queues, throttling per table', () => {
    expect(alarms).toHaveLength(
      1 + 3 * NAMES.length - 1 + 3 * BACKGROUND_NAMES.length + QUEUE_ALARMS + TABLE_KEYS.length,
    );
  });

  it('sends every alarm to the alarm topic and treats missing data as fine', () => {
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.TreatMissingData).toBe('notBreaching');
      expect(alarm.Properties.AlarmDescription).toEqual(expect.any(String));
    }
  });

  it('accepts only TLS publishers on the alarm topic', () => {
    synth.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Deny',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          },
        ],
      },
    });
  });

  it('subscribes nobody without alarmEmail', () => {
    synth.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('subscribes alarmEmail to the alarm topic', () => {
    const override = synthesize({ context: { alarmEmail: 'ops@example.com' } });
    try {
      override.template.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: 'email',
        Endpoint: 'ops@example.com',
      });
    } finally {
      override.dispose();
    }
  });
});

describe('the dashboard of golden signals', () => {
  /** The dashboard's body as written, each reference to a resource standing as `{ref}`. */
  const body = (template: Synthesized['template']): string => {
    const [dashboard] = Object.values(resources(template, 'AWS::CloudWatch::Dashboard'));
    const parts: Json[] = dashboard?.Properties.DashboardBody['Fn::Join'][1] ?? [];
    return parts.map((part) => (typeof part === 'string' ? part : '{ref}')).join('');
  };

  it('shows every route’s requests, 4xx, 5xx and p99 latency from API Gateway’s per-method metrics', () => {
    const text = body(synth.template);
    for (const route of ROUTES) {
      expect(text, `${route.method} ${route.path}`).toContain(`${route.method} ${route.path}`);
    }
    for (const metric of ['"Count"', '"4XXError"', '"5XXError"', '"Latency"', '"p99"'])
      expect(text).toContain(metric);
    // The per-method metrics exist only with detailed metrics on the stage.
    const [stage] = Object.values(resources(synth.template, 'AWS::ApiGateway::Stage'));
    expect(stage.Properties.MethodSettings).toContainEqual(expect.objectContaining({ MetricsEnabled: true }));
  });

  it('shows throttles, the dead-letter and stream-failure depths, and the delivery lag', () => {
    const text = body(synth.template);
    for (const metric of [
      '"Throttles"',
      '"ApproximateNumberOfMessagesVisible"',
      '"ApproximateAgeOfOldestMessage"',
      '"IteratorAge"',
    ])
      expect(text).toContain(metric);
  });

  it('is left out with the dashboard context key set to false', () => {
    const without = synthesize({ context: { dashboard: false } });
    try {
      expect(resources(without.template, 'AWS::CloudWatch::Dashboard')).toEqual({});
    } finally {
      without.dispose();
    }
  });
});
