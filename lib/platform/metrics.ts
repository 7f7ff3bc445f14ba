/**
 * Metrics as CloudWatch Embedded Metric Format log lines (what Powertools' Metrics writes): CloudWatch
 * Logs turns each line into a metric point, so counting costs no API call.
 */
import type { Metrics } from '#lib/domain/telemetry';

export const METRICS_NAMESPACE = 'EmbedSessionService';

export type MetricsSink = (line: string) => void;

const stdoutSink: MetricsSink = (line) => {
  process.stdout.write(`${line}\n`);
};

export type { Metrics };

/** One EMF line per count, written to `sink` (stdout by default). */
export function createMetrics(options: { service: string; sink?: MetricsSink; now?: () => number }): Metrics {
  const sink = options.sink ?? stdoutSink;
  const now = options.now ?? Date.now;
  return {
    count(name, value = 1, dimensions = {}) {
      const all = { service: options.service, ...dimensions };
      sink(
        JSON.stringify({
          _aws: {
            Timestamp: now(),
            CloudWatchMetrics: [
              {
                Namespace: METRICS_NAMESPACE,
                Dimensions: [Object.keys(all)],
                Metrics: [{ Name: name, Unit: 'Count' }],
              },
            ],
          },
          ...all,
          [name]: value,
        }),
      );
    },
  };
}
