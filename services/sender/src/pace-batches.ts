import type { PaceReservation } from '@metronome/redis';
import type { JobDeps } from './deps.js';

interface Waiter {
  maxWaitMs: number;
  resolve: (r: PaceReservation) => void;
  reject: (error: unknown) => void;
}

/**
 * The job's plain pace reservations (no ban-safety limits, no chat pace: a first part, whose
 * chat is claimed at its slot), one Redis call at a time (group commit, as claim-batches.ts
 * does for claims). A lane asks at once when no reservation of the job is out; lanes that ask
 * while one is out wait for it, then reserve together in one call (pace-reserve-many-3), each
 * slot the one a call of its own would have reserved, in the order they asked. Lanes whose
 * slots would lie beyond their longest wait ask again at once, first in line.
 */
export class PaceBatches {
  private waiting: Waiter[] = [];
  private busy = false;

  constructor(
    private readonly deps: JobDeps,
    private readonly accountId: string,
    private readonly token: string,
    private readonly perMinute: number,
    private readonly burst: number,
  ) {}

  /** Reserves one slot of the account's pace at most `maxWaitMs` ahead. */
  reserve(maxWaitMs: number): Promise<PaceReservation> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ maxWaitMs, resolve, reject });
      if (!this.busy) void this.next();
    });
  }

  private async next(): Promise<void> {
    this.busy = true;
    while (this.waiting.length > 0) {
      // lanes that may wait as long share a call (lanes typing first may wait longer)
      const maxWaitMs = this.waiting[0]!.maxWaitMs;
      const batch = this.waiting.filter((w) => w.maxWaitMs === maxWaitMs);
      this.waiting = this.waiting.filter((w) => w.maxWaitMs !== maxWaitMs);
      try {
        await this.reserveFor(batch, maxWaitMs);
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.busy = false;
  }

  private async reserveFor(batch: Waiter[], maxWaitMs: number): Promise<void> {
    const { deps } = this;
    const result = await deps.pace.reserveMany(this.accountId, this.token, deps.clock.now(), this.perMinute, this.burst, maxWaitMs, batch.length);
    if (!result.reserved) {
      for (const w of batch) w.resolve(result);
      return;
    }
    result.waitsMs.forEach((waitMs, i) => batch[i]!.resolve({ reserved: true, waitMs }));
    // Beyond the longest wait: these ask again, first in line (refused all together, or some
    // reserved if time has moved on meanwhile).
    this.waiting.unshift(...batch.slice(result.waitsMs.length));
  }
}
