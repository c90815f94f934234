import type { PaceReservation } from '@metronome/redis';
import type { JobDeps } from './deps.js';
import { GroupCommit } from './group-commit.js';

/**
 * The job's plain pace reservations (no ban-safety limits, no chat pace: a first part, whose
 * chat is claimed at its slot), one Redis call at a time (group commit, as claim-batches.ts
 * does for claims). A lane asks at once when no reservation of the job is out; lanes that ask
 * while one is out wait for it, then reserve together in one call (pace-reserve-many-3), each
 * slot the one a call of its own would have reserved, in the order they asked. Lanes whose
 * slots would lie beyond their longest wait ask again at once, first in line (group-commit.ts).
 */
export class PaceBatches {
  // lanes that may wait as long share a call (lanes typing first may wait longer)
  private readonly reservations: GroupCommit<number, PaceReservation>;

  constructor(deps: JobDeps, accountId: string, token: string, perMinute: number, burst: number) {
    this.reservations = new GroupCommit(async (maxWaitMs, requests): Promise<PaceReservation[]> => {
      const count = requests.length;
      const result = await deps.pace.reserveMany(accountId, token, deps.clock.now(), perMinute, burst, maxWaitMs, count);
      // refused: every lane of the call is told why; cut short by the longest wait: the rest ask again
      if (!result.reserved) return Array.from({ length: count }, () => result);
      return result.waitsMs.map((waitMs) => ({ reserved: true, waitMs }));
    });
  }

  /** Reserves one slot of the account's pace at most `maxWaitMs` ahead. */
  reserve(maxWaitMs: number): Promise<PaceReservation> {
    return this.reservations.ask(maxWaitMs);
  }
}
