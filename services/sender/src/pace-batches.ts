import type { PaceReservation } from '@metronome/redis';
import type { JobDeps } from './deps.js';
import { GroupCommit } from './group-commit.js';

/**
 * How far ahead a fast account's slots are reserved before its lanes ask for them. Slots due
 * within this of the last one asked for are reserved in the same call, for the job's next
 * sends: at 60,000 a minute a job of 17 sends made about two calls instead of six or seven (a
 * lane comes back for its next slot one claim and one request later, when its siblings' call
 * is out or done; docs/BENCHMARKS.md). Accounts slower than one send per RESERVE_AHEAD_MS
 * (about 3,000 a minute or slower), and senders that wait in-process less than it
 * (SENDER_MAX_INLINE_WAIT_MS), are reserved exactly as asked. A slot reserved ahead and not
 * taken holds the account back by at most this much: the pace can only come out slower.
 */
export const RESERVE_AHEAD_MS = 20;

/**
 * The job's plain pace reservations (no ban-safety limits, no chat pace: a first part, whose
 * chat is claimed at its slot), one Redis call at a time (group commit, as claim-batches.ts
 * does for claims). A lane asks at once when no reservation of the job is out; lanes that ask
 * while one is out wait for it, then reserve together in one call (pace-reserve-many-3), each
 * slot the one a call of its own would have reserved, in the order they asked. Lanes whose
 * slots would lie beyond their longest wait ask again at once, first in line (group-commit.ts).
 * A fast account's call also reserves the slots due just after (RESERVE_AHEAD_MS), up to what
 * the job may still send (`spare`); lanes take those first, in order, without a call.
 */
export class PaceBatches {
  // lanes that may wait as long share a call (lanes typing first may wait longer)
  private readonly reservations: GroupCommit<number, PaceReservation>;
  /** slots reserved ahead, in order: when each may be sent (`at`) and until when it may be taken (ms since the epoch) */
  private ahead: { at: number; until: number }[] = [];

  /**
   * `spare`: how many more slots the job may still take beyond those asked for (its budget
   * and its due targets left); nothing is reserved ahead beyond it.
   */
  constructor(
    private readonly deps: JobDeps,
    accountId: string,
    token: string,
    perMinute: number,
    burst: number,
    spare: () => number,
  ) {
    // a slot reserved ahead is taken within the inline wait or dropped (takeAhead)
    const aheadCount = deps.settings.maxInlineWaitMs < RESERVE_AHEAD_MS ? 0 : Math.floor(RESERVE_AHEAD_MS / (60_000 / perMinute));
    this.reservations = new GroupCommit(async (maxWaitMs, requests): Promise<PaceReservation[]> => {
      const now = deps.clock.now();
      const taken = this.takeAhead(now, maxWaitMs, requests.length);
      if (taken.length === requests.length) return taken;
      const count = requests.length - taken.length;
      const extra = Math.max(0, Math.min(aheadCount, spare()));
      const result = await deps.pace.reserveMany(accountId, token, now, perMinute, burst, maxWaitMs, count + extra);
      // refused: every lane of the call is told why (and a lost lock voids what was reserved
      // ahead); cut short by the longest wait: the rest ask again
      if (!result.reserved) {
        if ('lockLost' in result) this.ahead = [];
        return [...taken, ...Array.from({ length: count }, () => result)];
      }
      const until = now + deps.settings.maxInlineWaitMs;
      this.ahead.push(...result.waitsMs.slice(count).map((waitMs) => ({ at: now + waitMs, until })));
      return [...taken, ...result.waitsMs.slice(0, count).map((waitMs) => ({ reserved: true as const, waitMs }))];
    });
  }

  /** Reserves one slot of the account's pace at most `maxWaitMs` ahead. */
  reserve(maxWaitMs: number): Promise<PaceReservation> {
    const [slot] = this.takeAhead(this.deps.clock.now(), maxWaitMs, 1);
    return slot ? Promise.resolve(slot) : this.reservations.ask(maxWaitMs);
  }

  /**
   * Up to `count` slots reserved ahead, earliest first. A slot is taken at most
   * SENDER_MAX_INLINE_WAIT_MS after the call that reserved it and checked the lock, as a lane's
   * own slot is sent at most that long after its call; later, it is dropped (a slot sent later
   * than its moment only makes the account slower).
   */
  private takeAhead(now: number, maxWaitMs: number, count: number): PaceReservation[] {
    while (this.ahead.length > 0 && this.ahead[0]!.until < now) this.ahead.shift();
    const taken: PaceReservation[] = [];
    while (taken.length < count && this.ahead.length > 0 && this.ahead[0]!.at - now <= maxWaitMs) {
      taken.push({ reserved: true, waitMs: Math.max(0, this.ahead.shift()!.at - now) });
    }
    return taken;
  }
}
