/**
 * The back-channel logout of the local runtime: attempts on timers, the webhook retry schedule; and the
 * steps of a revoke-all's logout fan-out on timers too, run in this process instead of from a queue.
 */

import { destinationPost } from '#lib/adapters/outbound-http/destination-post';
import { TimerDeliveryScheduler } from '#lib/adapters/timers/local-scheduler';
import type { BoardAppUrlRule } from '#lib/domain/board-app';
import type { CutoffScope } from '#lib/domain/cutoffs';
import type { DestinationPolicy } from '#lib/domain/destinations';
import type { EventSink } from '#lib/domain/events';
import type { BoardRepository, CoveredSessions, IdTokenSigner, PairwiseSubjects } from '#lib/domain/ports';
import type { Logger } from '#lib/platform/logger';
import { createMetrics, type Metrics } from '#lib/platform/metrics';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import {
  attemptLogout,
  BackChannelLogoutSink,
  type LogoutDelivery,
  type LogoutDeps,
} from '#lib/use-cases/back-channel-logout';
import {
  expandLogouts,
  type FanOutDeps,
  type FanOutQueue,
  type LogoutFanOut,
  queuedFanOutStarts,
} from '#lib/use-cases/logout-fan-out';
import type { HttpPost } from '#lib/use-cases/webhook-delivery';

export interface LocalBackChannelLogout {
  sink: EventSink;
  /** Starts the logout fan-out of the cut-offs a revoke-all writes (the local change feed's `fanOuts`). */
  fanOuts: { start(jobs: ReadonlyArray<{ scope: CutoffScope; entryId: string }>): Promise<void> };
  /**
   * Resolves once every fan-out step and logout attempt scheduled so far, and all they scheduled in turn,
   * is done (retries included): tests count what a revoke-all sent after it, without waiting on a timer.
   */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export function localBackChannelLogout(options: {
  boards: BoardRepository;
  sessions: CoveredSessions;
  tokens: () => Promise<IdTokenSigner & PairwiseSubjects>;
  issuer: string;
  stageAppUrl: string | undefined;
  appUrlRule: BoardAppUrlRule;
  retrySeconds: readonly number[];
  logger: Logger;
  metrics?: Metrics;
  /** Where requests may go: public internet hosts, and loopback when the operator allowed it. */
  destinations: DestinationPolicy;
  post?: HttpPost;
  /** Seconds before an attempt that threw runs again (LOCAL_REDELIVERY_SECONDS unless given). */
  redeliverySeconds?: number;
}): LocalBackChannelLogout {
  const deps: LogoutDeps = {
    ...options,
    metrics: options.metrics ?? createMetrics({ service: 'backchannel-logout' }),
    post: options.post ?? destinationPost(options.destinations),
    clock: systemClock,
    random: cryptoRandom,
    scheduler: { schedule: async () => undefined },
  };
  const logouts = new TimerDeliveryScheduler<LogoutDelivery>((delivery) => attemptLogout(deps, delivery), {
    logger: options.logger,
    contextOf: ({ eventId, sessionId, boardId, attempt }) => ({
      eventId,
      sessionId,
      boardId,
      attempt: attempt + 1,
    }),
    redeliverySeconds: options.redeliverySeconds,
  });
  deps.scheduler = logouts;

  // A step that fails is run again on the retry schedule, as SQS offers a failed message again on AWS.
  const steps: TimerDeliveryScheduler<{ job: LogoutFanOut; failures: number }> = new TimerDeliveryScheduler(
    async ({ job, failures }) => {
      try {
        await expandLogouts(fanOutDeps, job);
      } catch (error) {
        const delay = options.retrySeconds[failures];
        options.logger.warn('logout fan-out step failed', {
          entryId: job.entryId,
          part: job.part ?? null,
          error: String(error),
          ...(delay !== undefined ? { retryInSeconds: delay } : { givenUp: true }),
        });
        if (delay !== undefined) await steps.schedule({ job, failures: failures + 1 }, delay);
      }
    },
    // The step handles its own failures above; what still throws is logged and offered again.
    {
      logger: options.logger,
      contextOf: ({ job, failures }) => ({ entryId: job.entryId, part: job.part ?? null, failures }),
      redeliverySeconds: options.redeliverySeconds,
    },
  );
  const queue: FanOutQueue = {
    send: async (works) => {
      for (const { work, delaySeconds } of works) {
        if ('logout' in work) await logouts.schedule(work.logout, delaySeconds);
        else await steps.schedule({ job: work.fanOut, failures: 0 }, delaySeconds);
      }
    },
  };
  const fanOutDeps: FanOutDeps = {
    sessions: options.sessions,
    boards: options.boards,
    stageAppUrl: options.stageAppUrl,
    appUrlRule: options.appUrlRule,
    queue,
    logger: options.logger,
  };
  return {
    sink: new BackChannelLogoutSink(deps),
    fanOuts: queuedFanOutStarts(queue),
    settled: async () => {
      // A step schedules logouts and a logout's retry nothing else: idle in that order, then both at once.
      for (;;) {
        await steps.whenIdle();
        await logouts.whenIdle();
        if (steps.isIdle() && logouts.isIdle()) return;
      }
    },
    close: async () => {
      await steps.close();
      await logouts.close();
    },
  };
}
