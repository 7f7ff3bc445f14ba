/** The back-channel logout sink of the local runtime: attempts on timers, the webhook retry schedule. */
import type { BoardAppUrlRule } from '#lib/domain/board-app';
import type { EventSink } from '#lib/domain/events';
import type { BoardRepository, IdTokenSigner, PairwiseSubjects } from '#lib/domain/ports';
import type { Logger } from '#lib/platform/logger';
import { createMetrics, type Metrics } from '#lib/platform/metrics';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { fetchPost, type HttpPost } from '#lib/webhooks/delivery';
import { TimerDeliveryScheduler } from '#lib/webhooks/local-scheduler';
import { attemptLogout, BackChannelLogoutSink, type LogoutDelivery, type LogoutDeps } from './backchannel';

export interface LocalBackChannelLogout {
  sink: EventSink;
  close(): Promise<void>;
}

export function localBackChannelLogout(options: {
  boards: BoardRepository;
  tokens: () => Promise<IdTokenSigner & PairwiseSubjects>;
  issuer: string;
  stageAppUrl: string | undefined;
  appUrlRule: BoardAppUrlRule;
  retrySeconds: readonly number[];
  logger: Logger;
  metrics?: Metrics;
  post?: HttpPost;
}): LocalBackChannelLogout {
  const deps: LogoutDeps = {
    ...options,
    metrics: options.metrics ?? createMetrics({ service: 'backchannel-logout' }),
    post: options.post ?? fetchPost,
    clock: systemClock,
    random: cryptoRandom,
    scheduler: { schedule: async () => undefined },
  };
  const scheduler = new TimerDeliveryScheduler<LogoutDelivery>((delivery) => attemptLogout(deps, delivery));
  deps.scheduler = scheduler;
  return { sink: new BackChannelLogoutSink(deps), close: () => scheduler.close() };
}
