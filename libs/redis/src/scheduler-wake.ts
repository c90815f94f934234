import type { RedisClient } from './connection.js';

/** The API's nudge to the scheduler leader to tick now: a list of at most one entry it BLPOPs between ticks; a lost nudge only waits for the next tick. */
export class SchedulerWake {
  constructor(private readonly key: string) {}

  async nudge(redis: RedisClient): Promise<void> {
    await redis.multi().lpush(this.key, '1').ltrim(this.key, 0, 0).exec();
  }

  /** `blocking` must be a connection used for nothing else: BLPOP holds it for the whole wait. */
  async wait(blocking: RedisClient, ms: number): Promise<boolean> {
    if (ms < 1) return false;
    // BLPOP takes seconds (fractions since Redis 6); 0 would block for ever
    const popped = await blocking.blpop(this.key, Math.max(ms, 1) / 1000);
    return popped !== null;
  }
}
