/**
 * The pace as the platform sees it. An account's sends are paced by a GCRA whose slots are
 * reserved ahead (in Redis, shared by every replica); a request is written some time after its
 * slot, and a platform stamps it later still. These rules keep what the platform receives
 * within `burst + pace × W` in every window W of at least a second.
 */

/**
 * Slots are spaced this much wider than the configured pace, so that requests written a little
 * late (a statement between the slot and the write, a busy event loop, network jitter) never add
 * up to one send too many in a window: at 600/min a window of 1 s then needs 120 ms of jitter
 * before it could see a twelfth send. Two per cent of an account's rate is the price. A job's own
 * requests keep the configured interval among themselves, from when each really left (sender
 * job-pace.ts): the margin absorbs their jitter, a request that left later pushes the next. (At the
 * slots' interval there, every late request pushed all the rest: 1,000 sends at 600/min took 1.11
 * of the ideal.)
 */
export const PACE_MARGIN = 0.02;

/** The sends per minute the sender reserves slots at, for a configured pace. */
export function pacedPerMinute(configuredPerMinute: number): number {
  return configuredPerMinute / (1 + PACE_MARGIN);
}

/**
 * The job's own pace over the moments its requests were really written (a GCRA over real
 * times, `tat` = theoretical arrival time). A request written late pushes the next ones, which
 * the slots reserved ahead would not: sends never bunch up behind a late one.
 */
export interface WrittenPace {
  tat: number;
}

/** How long to wait before writing a request now, so writes keep the pace among themselves. */
export function writeWaitMs(pace: WrittenPace, now: number, intervalMs: number, burst: number): number {
  return Math.max(0, pace.tat - (burst - 1) * intervalMs - now);
}

/** Records a request written at `at`; returns the pace after it. */
export function afterWrite(pace: WrittenPace, at: number, intervalMs: number): WrittenPace {
  return { tat: Math.max(pace.tat, at) + intervalMs };
}

/**
 * Whether a lane waits in-process for a target that comes due at `dueAt`: for up to `maxWaitMs`
 * (the sender's gate wait, SENDER_MAX_GATE_WAIT_MS, never shorter than a pace slot's wait, plus
 * one interval per sibling lane), measured when the lane takes it. A target due later is left to
 * a continuation job due then.
 *
 * Measured from the lane's turn, not from the job's start: an interval campaign's chats come due
 * a pace interval apart (each gated by its own send in the run before), and a bound from the
 * job's start cut a run of them after the first few. Each chat behind the cut then waited for a
 * job of its own, a queue round trip later, and that delay carried into the chat's gate for the
 * run after, so those chats drifted later run after run (interval-drift). A job still makes at
 * most its budget of sends.
 */
export function waitsInline(dueAt: number, now: number, maxWaitMs: number): boolean {
  return dueAt - now <= maxWaitMs;
}
