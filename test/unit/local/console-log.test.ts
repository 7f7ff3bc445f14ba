import { afterEach, describe, expect, it, vi } from 'vitest';
import { consoleLogger, humanLine, logFormatOf } from '#local/console-log';

describe('npm start log format', () => {
  afterEach(() => vi.unstubAllEnvs());

  it.each([
    [{}, true, 'human'],
    [{}, false, 'json'],
    [{ LOG_FORMAT: 'json' }, true, 'json'],
    [{ LOG_FORMAT: 'human' }, false, 'human'],
  ] as const)('with %j and a terminal=%s writes %s lines', (env, tty, format) => {
    expect(logFormatOf(env, tty)).toBe(format);
  });

  it('writes a request as method, path, status and milliseconds', () => {
    const json = JSON.stringify({
      level: 'info',
      message: 'request',
      requestId: 'r',
      method: 'GET',
      path: '/embed',
      status: 401,
      ms: 7,
    });
    expect(humanLine(json)).toBe('GET /embed 401 7 ms');
  });

  it.each(['human', 'json'] as const)(
    'holds %s lines until the banner is out, then writes them in order, with no token',
    (format) => {
      vi.stubEnv('LOG_LEVEL', 'info');
      const written: string[] = [];
      const { logger, release } = consoleLogger(format, (line) => written.push(line));
      const token = 'tok_secret_value_of_a_session_1234';
      // The gateway logs the path only; the query string (and its token) never reaches the logger.
      logger.info('request', { method: 'GET', path: '/embed', status: 200, ms: 3 });
      expect(written).toEqual([]);
      release();
      logger.info('request', { method: 'POST', path: '/api/embed/sessions', status: 201, ms: 12 });
      expect(written).toHaveLength(2);
      expect(written.join('\n')).not.toContain(token);
      if (format === 'human')
        expect(written).toEqual(['GET /embed 200 3 ms', 'POST /api/embed/sessions 201 12 ms']);
      else expect(written.map((line) => JSON.parse(line).path)).toEqual(['/embed', '/api/embed/sessions']);
    },
  );
});
