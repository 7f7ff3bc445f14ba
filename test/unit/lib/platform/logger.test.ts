import { describe, expect, it } from 'vitest';
import { createLogger, describeError } from '#lib/platform/logger';

function sinkLogger(level: string) {
  const lines: string[] = [];
  const logger = createLogger({ function: 'f' }, { level, sink: (line) => lines.push(line) });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes one JSON object per line with level, time, message and fields', () => {
    const { logger, parsed } = sinkLogger('debug');
    logger.info('hello', { status: 400 });
    expect(parsed()).toEqual([
      { level: 'info', time: expect.stringMatching(/Z$/), message: 'hello', function: 'f', status: 400 },
    ]);
  });

  it('drops lines below the threshold', () => {
    const { logger, parsed } = sinkLogger('warn');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(parsed().map((l) => l.level)).toEqual(['warn', 'error']);
  });

  it('adds child fields, such as the request id, to every line and keeps the threshold', () => {
    const { logger, parsed } = sinkLogger('error');
    const child = logger.child({ requestId: 'req-1' });
    child.info('dropped');
    child.error('kept');
    expect(parsed()).toEqual([
      expect.objectContaining({ message: 'kept', requestId: 'req-1', function: 'f' }),
    ]);
  });
});

describe('describeError', () => {
  it('keeps name, message and stack but not the cause', () => {
    const error = new Error('outer', { cause: { item: { email: 'ada@example.com' } } });
    const fields = describeError(error);
    expect(fields).toMatchObject({ errorName: 'Error', errorMessage: 'outer' });
    expect(JSON.stringify(fields)).not.toContain('ada@example.com');
  });

  it('describes a thrown non-error only by its type', () => {
    expect(describeError('secret string')).toEqual({ errorName: 'string' });
  });
});
