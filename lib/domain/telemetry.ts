/**
 * What a use case may report about its work, as ports: log lines and counts. The JSON logger and the
 * CloudWatch metric lines that implement them live in lib/platform; tests pass their own.
 */

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger that adds `fields` (for instance the request id) to every line. */
  child(fields: LogFields): Logger;
}

export interface Metrics {
  /** Adds `value` to the count `name`, with these dimensions (service-level when none). */
  count(name: string, value?: number, dimensions?: Record<string, string>): void;
}
