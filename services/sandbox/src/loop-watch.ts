import { performance } from 'node:perf_hooks';

/** How often the watch beats, ms. */
export const BEAT_MS = 10;

/**
 * How late the sandbox may have stamped what it received. A request is stamped when the
 * event loop reaches it; a loop that was held up (a garbage collection, a machine whose cores
 * are all taken) stamps the requests that came meanwhile all at once, later than they came, and
 * its record then shows sends closer together than they were. A timer beats every BEAT_MS: a
 * request stamped longer than a beat after the last one may have come as early as that beat.
 * `slackMs()` is then the time since that beat, and 0 while the loop keeps up (a stamp within a
 * beat of the last one is as exact as the clock's grain), so whoever judges the record by time
 * knows how far each stamp may be from the arrival. On the real clock only: a fake clock's
 * stamps have no loop to wait for.
 */
export class LoopWatch {
  private lastBeat: number;
  private readonly timer: NodeJS.Timeout;

  /** `now`: a monotonic clock in ms (tests pass their own). */
  constructor(private readonly now: () => number = () => performance.now()) {
    this.lastBeat = now();
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
  }

  /** The loop reached the beat's timer: it is keeping up at this moment. */
  beat(): void {
    this.lastBeat = this.now();
  }

  /** How long since the last beat, whole ms, when that is longer than a beat (the loop was held up); else 0. */
  slackMs(): number {
    const sinceBeat = this.now() - this.lastBeat;
    return sinceBeat > BEAT_MS ? Math.ceil(sinceBeat) : 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
