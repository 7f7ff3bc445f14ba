import { createLogger, type Logger } from '#lib/platform/logger';

/** How `npm start` writes its log: a short line per request for a person, JSON lines for a machine. */
export type LogFormat = 'human' | 'json';

/** Human lines on a terminal, JSON lines when stdout is a pipe or a file, or when LOG_FORMAT=json. */
export function logFormatOf(env: Record<string, string | undefined>, isTty: boolean): LogFormat {
  const asked = env.LOG_FORMAT?.trim().toLowerCase();
  if (asked === 'json') return 'json';
  if (asked === 'human') return 'human';
  return isTty ? 'human' : 'json';
}

/**
 * One log line as a person reads it: `POST /api/embed/sessions 201 12 ms` for a request (the path
 * only, as the gateway logs it: a query string may hold an embed token), `level: message` otherwise.
 */
export function humanLine(jsonLine: string): string {
  const fields = JSON.parse(jsonLine) as Record<string, unknown>;
  if (fields.message === 'request') return `${fields.method} ${fields.path} ${fields.status} ${fields.ms} ms`;
  const detail = typeof fields.errorMessage === 'string' ? ` (${fields.errorMessage})` : '';
  return `${fields.level}: ${fields.message}${detail}`;
}

/**
 * The local gateway's logger for `npm start`: lines written before `release()` (the demo session's
 * request, say) wait until then, so the banner comes first.
 */
export function consoleLogger(
  format: LogFormat,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): { logger: Logger; release(): void } {
  const held: string[] = [];
  let released = false;
  const sink = (json: string) => {
    const line = format === 'human' ? humanLine(json) : json;
    if (released) write(line);
    else held.push(line);
  };
  return {
    logger: createLogger({ component: 'local-gateway' }, { sink }),
    release: () => {
      released = true;
      for (const line of held.splice(0)) write(line);
    },
  };
}
