/** How long a job's account lock is surely its own: the TTL from the start of the last acquire or renewal Redis confirmed. */
export class LockLease {
  private until: number;
  private lost = false;
  private onLost: (() => void) | null = null;

  constructor(
    private readonly ttlMs: number,
    acquiredAt: number,
  ) {
    this.until = acquiredAt + ttlMs;
  }

  /** A renewal whose request started at `at` was confirmed. */
  renewed(at: number): void {
    this.until = Math.max(this.until, at + this.ttlMs);
  }

  /** Redis said the token no longer holds the lock. */
  lose(): void {
    this.lost = true;
    this.onLost?.();
  }

  /**
   * Held at `now` until a sixth of the TTL before its end: renewals come every third, so one missed still leaves room,
   * and a claim or request started at the check lands before the lock can be another's.
   */
  heldAt(now: number): boolean {
    return !this.lost && now < this.until - this.ttlMs / 6;
  }

  whenLost(listener: () => void): void {
    this.onLost = listener;
  }
}
