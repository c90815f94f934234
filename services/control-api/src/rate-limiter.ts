import type { Clock } from '@metronome/core';

/**
 * Per-token request limit: GCRA with a burst of one minute's allowance, so a client may spend
 * its `perMinute` at once and then gets one request every 60/perMinute s. Unlike a fixed
 * window, it never allows twice the limit across a window boundary.
 *
 * The state is in this process: with several API replicas each enforces the limit on its own.
 * That is enough to stop a runaway script; it is not a quota.
 */
export class RateLimiter {
  // key → theoretical arrival time (ms): when the bucket is full again
  private readonly tat = new Map<string, number>();
  private readonly interval: number;
  private readonly tolerance: number;

  constructor(
    perMinute: number,
    private readonly clock: Clock,
    private readonly maxKeys = 10_000,
  ) {
    this.interval = 60_000 / perMinute;
    this.tolerance = 60_000 - this.interval;
  }

  /** Takes one request for `key`: 0 when allowed, else the milliseconds to wait. */
  take(key: string): number {
    const now = this.clock.now();
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const allowAt = tat - this.tolerance;
    if (allowAt > now) return Math.ceil(allowAt - now);
    if (!this.tat.has(key) && this.tat.size >= this.maxKeys) this.prune(now);
    this.tat.set(key, tat + this.interval);
    return 0;
  }

  // A key whose bucket is full again is the same as an absent one: forget it.
  private prune(now: number): void {
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key);
  }
}
