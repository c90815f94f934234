import type { Clock } from '@metronome/core';
import type { Logger } from '@metronome/observability';
import type { SharedRateLimit } from '@metronome/redis';

/**
 * One of the API's limits (per token: API_RATE_LIMIT_PER_MINUTE; per client address:
 * AUTH_FAILURES_PER_MINUTE), shared by every API replica through Redis. It fails open: while
 * Redis does not answer (it is disposable; PostgreSQL holds the truth), requests go on unlimited
 * rather than fail, and a warning says so once a minute.
 */
export class RateLimiter {
  private warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly limit: SharedRateLimit,
    private readonly perMinute: number,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** names the limit in the warning */
    private readonly name = 'rate limit',
  ) {}

  /** Takes one request for `key`: 0 when allowed, else the milliseconds to wait. */
  async take(key: string): Promise<number> {
    try {
      return await this.limit.take(key, this.clock.now(), this.perMinute);
    } catch (err) {
      this.unavailable(err);
      return 0;
    }
  }

  /** Gives back one request taken for `key` that turned out not to count. */
  async giveBack(key: string): Promise<void> {
    try {
      await this.limit.giveBack(key, this.clock.now(), this.perMinute);
    } catch (err) {
      this.unavailable(err);
    }
  }

  private unavailable(err: unknown): void {
    const now = this.clock.now();
    if (now - this.warnedAt < 60_000) return;
    this.warnedAt = now;
    this.logger.warn({ err, limit: this.name }, `${this.name} unavailable (Redis does not answer): requests are not limited until it does`);
  }
}
