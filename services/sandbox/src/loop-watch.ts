import { performance } from 'node:perf_hooks';

/** How often the watch beats, ms. */
export const BEAT_MS = 10;

/**
 * How late the sandbox may have stamped what it received. A request is stamped when the
 * event loop reaches it; a loop that was held up (a garbage collection, a machine whose cores
 * are all taken) stamps the requests that came meanwhile all at once, later than they came, and
 * its record then shows sends closer together than they were. A timer beats every BEAT_MS: a
 * request stamped longer than a beat after the last one may have come as early as that beat.
 * `slackMs()` is that uncertainty beyond a beat (0 while the loop keeps up), so whoever judges
 * the record by time knows how far each stamp may be from the arrival. On the real clock only:
 * a fake clock's stamps have no loop to wait for.
 */
export class LoopWatch {
  private lastBeat = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => {
      this.lastBeat = performance.now();
    }, BEAT_MS);
    this.timer.unref();
  }

  /** How much later than a beat after the last one this moment is, whole ms (0: the loop kept up). */
  slackMs(): number {
    return Math.max(0, Math.ceil(performance.now() - this.lastBeat - BEAT_MS));
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
