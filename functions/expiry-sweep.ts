import { environmentOf } from '#lib/definitions/environment';
import { createLogger, describeError } from '#lib/platform/logger';
import { sweepExpired } from '#lib/use-cases/publish-events';
import { expirySweepDeps } from './wiring';

const deps = expirySweepDeps(environmentOf('expirySweep', process.env));
const logger = createLogger({ function: 'expiry-sweep' });

/** Every five minutes (an EventBridge schedule): `session.expired` for the sessions that expired since. */
export const handler = async (): Promise<{ published: number }> => {
  const published = await sweepExpired(deps, (error, context) =>
    logger.error('expiry sweep step failed; the next run retries it', {
      ...context,
      ...describeError(error),
    }),
  );
  logger.info('expiry sweep done', { published });
  return { published };
};
