import type { Clock } from '@metronome/core';
import type { Logger } from '@metronome/observability';
import { answerWithin, type PairRefusal, type SharedRateLimit } from '@metronome/redis';

/** How long a limit waits for Redis before it lets the request through. */
export const LIMIT_ANSWER_MS = 500;

/**
 * The API's two request limits, shared by every API replica through Redis: failed
 * authentications per client address (AUTH_FAILURES_PER_MINUTE) and requests per token
 * (API_RATE_LIMIT_PER_MINUTE). It fails open: while Redis does not answer (it is disposable;
 * PostgreSQL holds the truth), requests go on unlimited rather than fail, and a warning says so
 * once a minute.
 */
export class AuthLimiter {
  private warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly limit: SharedRateLimit,
    private readonly perMinute: { failures: number; perToken: number },
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** how long to wait for Redis before letting the request through */
    private readonly answerMs = LIMIT_ANSWER_MS,
  ) {}

  /**
   * One request of `token` from `address`, in one Redis call: refused while the address's
   * failures are spent out; else one of the token's requests taken, and, when `spendFailure`,
   * one of the address's failures (given back with `giveBackFailure` once the token proves
   * valid). A refusal takes nothing.
   */
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

  /** Gives back a failure taken by `admit` for a token that proved valid. */
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
