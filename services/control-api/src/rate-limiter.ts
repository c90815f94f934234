import type { Clock } from '@metronome/core';
import type { Logger } from '@metronome/observability';
import { answerWithin, type PairRefusal, type SharedRateLimit } from '@metronome/redis';

/** How long a limit waits for Redis before it lets the request through. */
export const LIMIT_ANSWER_MS = 500;

/**
 * Failed authentications per address and requests per token, shared through Redis. Fails open: while Redis does not answer
 * (it is disposable; PostgreSQL holds the truth), requests go on, and a warning says so once a minute.
 */
export class AuthLimiter {
  private warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly limit: SharedRateLimit,
    private readonly perMinute: { failures: number; perToken: number },
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly answerMs = LIMIT_ANSWER_MS,
  ) {}

  /** One Redis call: refused while the address's failures are spent; else a token request (and, when `spendFailure`, a failure) taken. */
  async admit(address: string, token: string, spendFailure: boolean): Promise<PairRefusal> {
    try {
      const taking = this.limit.takeBoth(
        { key: address, perMinute: this.perMinute.failures, spend: spendFailure },
        { key: token, perMinute: this.perMinute.perToken },
        this.clock.now(),
      );
      return await answerWithin(taking, this.answerMs, 'rate limit');
    } catch (err) {
      this.unavailable(err);
      return null;
    }
  }

  /** Takes one of the address's failures (a request with no usable token): 0 when allowed, else the ms to wait. */
  async takeFailure(address: string): Promise<number> {
    try {
      return await answerWithin(this.limit.take(address, this.clock.now(), this.perMinute.failures), this.answerMs, 'failure limit');
    } catch (err) {
      this.unavailable(err);
      return 0;
    }
  }

  async giveBackFailure(address: string): Promise<void> {
    try {
      await answerWithin(this.limit.giveBack(address, this.clock.now(), this.perMinute.failures), this.answerMs, 'failure limit');
    } catch (err) {
      this.unavailable(err);
    }
  }

  private unavailable(err: unknown): void {
    const now = this.clock.now();
    if (now - this.warnedAt < 60_000) return;
    this.warnedAt = now;
    this.logger.warn({ err }, 'API rate limits unavailable (Redis does not answer): requests are not limited until it does');
  }
}
