import { redisKeys, SchedulerWake } from '@metronome/redis';
import type { ApiContext } from './context.js';

const NUDGE_TIMEOUT_MS = 1000;

/**
 * After a create or PATCH has committed: when the campaign is active and its next occurrence is
 * due already, asks the scheduler leader to tick now (CONTRACT, instant starts), so the run does
 * not wait for the next tick. The leader still decides, in its fenced tick, under the usual
 * rules (never two runs for one occurrence). Not awaited by the answer; a nudge Redis does not
 * take only leaves the run to the regular tick, so failures are logged, never answered.
 */
export function nudgeIfDue(ctx: ApiContext, c: { active: boolean; nextRunAt: Date | null }): void {
  if (!c.active || c.nextRunAt === null || c.nextRunAt.getTime() > ctx.clock.now()) return;
  const wake = new SchedulerWake(redisKeys(ctx.config.keyPrefix).schedulerWake);
  const timer = setTimeout(() => ctx.logger.warn('scheduler nudge not answered in time; the next tick starts the run'), NUDGE_TIMEOUT_MS);
  wake
    .nudge(ctx.redis)
    .catch((err: unknown) => ctx.logger.warn({ err }, 'could not nudge the scheduler; the next tick starts the run'))
    .finally(() => clearTimeout(timer));
}
