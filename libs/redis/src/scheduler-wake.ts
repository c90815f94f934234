import type { RedisClient } from './connection.js';

/**
 * The control API's nudge to the scheduler leader: a campaign came due now (created or
 * activated), so tick at once instead of at the next tick. A list holding at most one entry:
 * the leader blocks on it (BLPOP) between ticks, and nudges made while it ticks leave one entry
 * behind, so a burst of creates costs at most one more tick. Losing a nudge (Redis down) only
 * delays the run to the regular tick.
 */
export class SchedulerWake {
  constructor(private readonly key: string) {}

  /** One round trip: push, then keep the list to one entry. */
  async nudge(redis: RedisClient): Promise<void> {
    await redis.multi().lpush(this.key, '1').ltrim(this.key, 0, 0).exec();
  }

  /**
   * Waits up to `ms` for a nudge; true when one came. `blocking` must be a connection used for
   * nothing else, since BLPOP holds it for the whole wait.
   */
  async wait(blocking: RedisClient, ms: number): Promise<boolean> {
    if (ms < 1) return false;
    // BLPOP takes seconds (fractions since Redis 6); 0 would block for ever
    const popped = await blocking.blpop(this.key, Math.max(ms, 1) / 1000);
    return popped !== null;
  }
}
