import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Logger } from '#lib/platform/logger';
import { memoryLogger } from './logs';

/**
 * A handler that throws `error`, wrapped in the error middleware `errors` makes with an in-memory logger:
 * `invoke` runs it on `event`, `lines` reads what it logged.
 */
export function failingHandler<Event, Result>(
  errors: (options: { logger: Logger }) => middy.MiddlewareObj<Event, Result>,
  error: unknown,
  event: Event,
  context: Context,
) {
  const { logger, lines } = memoryLogger();
  const handler = middy<Event, Result>()
    .use(errors({ logger }))
    .handler(async () => {
      throw error;
    });
  return { lines, invoke: () => handler(event, context) };
}
