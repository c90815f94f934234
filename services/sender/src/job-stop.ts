import type { JobDeps } from './deps.js';
import type { LockLease } from './lock-lease.js';

export type StopReason = 'window' | 'pace' | 'account-wait' | 'account-unavailable' | 'lock-lost' | 'error' | 'storage' | 'drain';

// Hard stops end a chat mid-way (its later parts wait); soft stops let a started chat finish.
const HARD_STOPS: ReadonlySet<StopReason> = new Set(['window', 'account-wait', 'account-unavailable', 'lock-lost', 'error', 'storage', 'drain']);

/** Why the job stopped (the first hard stop wins over soft ones), and its sleeps, woken at once by a drain or a lost lock. */
export class JobStop {
  private why: StopReason | null = null;
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly deps: JobDeps,
    private readonly lease: LockLease,
  ) {
    lease.whenLost(() => {
      this.with('lock-lost');
      this.wake();
    });
  }

  get reason(): StopReason | null {
    return this.why;
  }

  get hard(): boolean {
    return this.why !== null && HARD_STOPS.has(this.why);
  }

  with(reason: StopReason): void {
    if (this.why === null || (!HARD_STOPS.has(this.why) && HARD_STOPS.has(reason))) this.why = reason;
  }

  halted(): boolean {
    return this.hard || this.deps.draining.aborted;
  }

  /** False once the account lock may have ended (lock-lease.ts): the job stops as if Redis had said so. */
  leaseHeld(): boolean {
    if (this.lease.heldAt(this.deps.clock.now())) return true;
    this.with('lock-lost');
    return false;
  }

  /** Sleeps `ms`, or less when the sender starts draining (the caller checks). */
  async pause(ms: number): Promise<void> {
    if (ms <= 0 || this.deps.draining.aborted) return;
    await new Promise<void>((resolve) => {
      this.sleepers.add(resolve);
      void this.deps.sleep(Math.ceil(ms)).then(() => {
        this.sleepers.delete(resolve);
        resolve();
      });
    });
  }

  async until(at: number): Promise<boolean> {
    for (;;) {
      if (this.halted()) return false;
      const wait = at - this.deps.clock.now();
      if (wait <= 0) return true;
      await this.pause(wait);
    }
  }

  /** Wakes every sleeper when the sender starts draining (one listener per job); returns the unsubscribe. */
  wakeOnDrain(): () => void {
    const wake = () => this.wake();
    this.deps.draining.addEventListener('abort', wake, { once: true });
    return () => this.deps.draining.removeEventListener('abort', wake);
  }

  private wake(): void {
    for (const resolve of this.sleepers) resolve();
    this.sleepers.clear();
  }
}
