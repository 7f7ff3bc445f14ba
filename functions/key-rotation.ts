import type { RotationResult } from '#lib/adapters/signing/keyring-keys';
import { environmentOf } from '#lib/definitions/environment';
import { STAGE_ROTATION } from '#lib/domain/keyring';
import { readKeyRotationConfig } from '#lib/platform/config';
import { createLogger } from '#lib/platform/logger';
import { keyRotation } from './wiring';

const config = readKeyRotationConfig(environmentOf('keyRotation', process.env));
const logger = createLogger({ function: 'key-rotation' });

/**
 * Every 10 minutes (an EventBridge schedule): the keyring's scheduled rotation. It makes the keyring on a
 * new stage, schedules the next key when the current one is due, and drops retired keys; otherwise it
 * writes nothing. A run that meets another's write fails and the next run does the step.
 */
export const handler = async (): Promise<Pick<RotationResult, 'outcome'> & { kids: string[] }> => {
  const result = await (await keyRotation(config, STAGE_ROTATION)).scheduled();
  const kids = result.keys.map((key) => key.kid);
  logger.info('key rotation done', { outcome: result.outcome, kids });
  return { outcome: result.outcome, kids };
};
