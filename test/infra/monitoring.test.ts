import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../lib/routes';
import { TABLE_KEYS, type TableKey } from '../../lib/tables';
import {
  functionByDescription,
  type Json,
  resources,
  type Synthesized,
  synthesize,
  tableLogicalIds,
} from './support';

const NAMES = Object.keys(FUNCTIONS) as (keyof typeof FUNCTIONS)[];

let synth: Synthesized;
let alarms: Json[];
let topicId: string;

beforeAll(() => {
  synth = synthesize();
  alarms = Object.values(resources(synth.template, 'AWS::CloudWatch::Alarm'));
  [topicId] = Object.keys(resources(synth.template, 'AWS::SNS::Topic')) as [string];
});
afterAll(() => synth?.dispose());

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

  it.each(NAMES.flatMap((name) => [[name, 'Errors'] as const, [name, 'Throttles'] as const]))(
    'alarms on %s %s',
    (name, metricName) => {
      const [functionId] = functionByDescription(synth.template, FUNCTIONS[name].description);
      const matching = withMetric('AWS/Lambda', metricName).filter(
        (a) => a.Properties.Dimensions[0].Value.Ref === functionId,
      );
      expect(matching).toHaveLength(1);
      expect(matching[0].Properties).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
    },
  );

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
        Object.values(FUNCTIONS).flatMap((fn) => [
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

  it('has exactly these alarms: API 5XX, errors and throttles per function, throttling per table', () => {
    expect(alarms).toHaveLength(1 + 2 * NAMES.length + TABLE_KEYS.length);
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
