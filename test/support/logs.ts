import { vi } from 'vitest';
import { createLogger, type Logger } from '#lib/platform/logger';

/** A debug-level logger whose JSON lines are kept in memory. */
export function memoryLogger(): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const raw: string[] = [];
  const logger = createLogger({}, { level: 'debug', sink: (line) => raw.push(line) });
  return { logger, lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** Captures (without echoing) everything written to stdout; call `restore` when done. */
export function captureStdout(): { text: () => string; restore: () => void } {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  return { text: () => chunks.join(''), restore: () => spy.mockRestore() };
}
