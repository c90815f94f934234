import { subscribe, type Logger } from '@metronome/observability';
import type { SchedulerEvents } from './scheduler-events.js';

/** Turns the scheduler's events into its log lines (messages, levels and fields operators and tests look for); returns the unsubscribe. */
export function subscribeLogs(events: SchedulerEvents, logger: Logger): () => void {
  return subscribe(events, {
    'tick:redo': (e) =>
      logger.warn({ err: e.error }, 'a batched statement of the tick failed on its data: doing the tick again, setting aside the rows that fail'),
    'schedule:decision': ({ decision }) => {
      const { reason, ...fields } = decision;
      if (decision.outcome === 'failed') logger.warn({ ...fields, decision: decision.outcome }, reason);
      else logger.info({ ...fields, decision: decision.outcome }, reason);
    },
    'run:requeued': (e) => logger.warn({ runId: e.runId, jobSeq: e.jobSeq }, 'run had no live job in Redis: re-enqueued'),
    'account:not-delivering': (e) =>
      logger.warn(
        { accountId: e.accountId, platform: e.platform, sends: e.sends },
        'account not delivering: none of its last sends got a delivery receipt; cooling until receipts come again',
      ),
    'account:cooling-ended': (e) =>
      logger.info({ accountId: e.accountId, platform: e.platform }, 'account cooling ended: active again, its pace recovering step by step'),
    'reconcile:done': (e) => {
      if (e.expiredLeases) logger.warn({ targets: e.expiredLeases }, 'in-flight sends whose sender stopped: marked unknown');
      if (e.expiredPaused) logger.info({ runs: e.expiredPaused }, 'paused runs past PAUSED_RUN_TTL: cancelled');
    },
    'leader:gained': (e) => logger.info({ fence: e.fence, holder: e.holder }, 'leading the schedule'),
    'leader:lost': () => logger.warn('leadership lost: standing by'),
    'leader:lapsed': (e) => logger.warn({ state: e.state }, 'leader lease lapsed: leadership ends until the next tick'),
  });
}
