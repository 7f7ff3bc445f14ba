import { keyRotation } from '#functions/wiring';
import type { RotationResult } from '#lib/adapters/signing/keyring-keys';
import { LOCAL_ROTATION, type RotationPolicy } from '#lib/domain/keyring';
import type { IdTokenKeysConfig } from '#lib/platform/config';
import type { Logger } from '#lib/platform/logger';

/** How often the local runtime runs the keyring's scheduled rotation (AWS: every ten minutes). */
export const LOCAL_ROTATION_CHECK_MS = 60_000;

export interface LocalKeyRotation {
  /** Runs the scheduled step once (what the timer runs). */
  rotate(): Promise<RotationResult>;
  stop(): void;
}

/**
 * The keyring's rotation on the local runtime: the same code as the stage's rotation function, on the
 * short local schedule. It runs once at start (so the keyring exists before the first hand-off), then on
 * a timer.
 */
export async function startLocalKeyRotation(
  config: IdTokenKeysConfig,
  logger: Logger,
  options: { policy?: RotationPolicy; checkMs?: number } = {},
): Promise<LocalKeyRotation> {
  const rotation = await keyRotation(config, options.policy ?? LOCAL_ROTATION);
  await rotation.scheduled();
  const timer = setInterval(() => {
    rotation
      .scheduled()
      .catch((error) => logger.error('local key rotation failed; will retry', { error: String(error) }));
  }, options.checkMs ?? LOCAL_ROTATION_CHECK_MS);
  timer.unref();
  return { rotate: () => rotation.scheduled(), stop: () => clearInterval(timer) };
}
