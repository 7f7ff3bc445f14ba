/**
 * A minimal structured JSON logger. Kept in-house (a few lines) so that it costs nothing at cold start.
 * Callers pass explicit fields; nothing logs a request body, a header or a query string, which is how
 * API keys and session tokens stay out of the logs.
 */
import type { LogFields, Logger } from '#lib/domain/telemetry';
import { mapStackTrace } from './source-maps';

export type { LogFields, Logger };
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** The levels `LOG_LEVEL` (and the stack's `logLevel` context) may name. */
export const LOG_LEVELS = Object.keys(LEVELS) as readonly LogLevel[];

export type LogSink = (line: string) => void;

const stdoutSink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

/** Creates a JSON-lines logger; `LOG_LEVEL` picks the threshold (default `info`). */
export function createLogger(base: LogFields = {}, options: { level?: string; sink?: LogSink } = {}): Logger {
  const level = (options.level ?? process.env.LOG_LEVEL ?? 'info').toLowerCase() as LogLevel;
  const threshold = LEVELS[level] ?? LEVELS.info;
  const sink = options.sink ?? stdoutSink;
  const write = (lvl: LogLevel, message: string, fields?: LogFields) => {
    if (LEVELS[lvl] < threshold) return;
    sink(JSON.stringify({ level: lvl, time: new Date().toISOString(), message, ...base, ...fields }));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...base, ...fields }, { level, sink }),
  };
}

/** The loggable part of an error: never its `cause` chain's payloads, only names, messages and stack. */
export function describeError(error: unknown): LogFields {
  if (error instanceof Error) {
    return {
      errorName: error.name,
      errorMessage: error.message,
      stack: error.stack === undefined ? undefined : mapStackTrace(error.stack),
    };
  }
  return { errorName: typeof error };
}
