import type { ManualClock } from '@metronome/core';
import type { Timers } from '@metronome/transports';

/** Timers on a manual clock: they fire when a test moves the clock past them, never on their own. */
export class ManualTimers implements Timers {
  private pending: { at: number; fn: () => void; cancelled: boolean }[] = [];

  constructor(private readonly clock: ManualClock) {}

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const timer = { at: this.clock.now() + ms, fn, cancelled: false };
    this.pending.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** When the timers still waiting are due (clock ms), soonest first. */
  dueTimes(): number[] {
    return this.pending
      .filter((t) => !t.cancelled)
      .map((t) => t.at)
      .sort((a, b) => a - b);
  }

  /** Moves the clock to `ms` and runs every timer due by then, in order. */
  advanceTo(ms: number): void {
    this.clock.set(ms);
    const due = this.pending.filter((t) => !t.cancelled && t.at <= ms).sort((a, b) => a.at - b.at);
    this.pending = this.pending.filter((t) => !due.includes(t) && !t.cancelled);
    for (const t of due) t.fn();
  }
}
